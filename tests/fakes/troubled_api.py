"""An HTTP API in trouble, on a real loopback socket: it answers every GET after `delay` seconds
with `status` and `body` (garbage, an error, or good data late), and counts the requests it got.
`closed_url()` is a URL nothing listens on: a source that is down."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.fakes.serving import send, serving


@dataclass
class TroubledApi:
    url: str = ""
    delay: float = 0.0
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def troubled_api(*, delay: float = 0.0, status: int = 200, body: bytes = b"") -> Iterator[TroubledApi]:
    state = TroubledApi(delay=delay, status=status, body=body)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with state._lock:
                state.requests += 1
            time.sleep(state.delay)
            send(self, state.status, state.body, state.content_type, {})

        def log_message(self, format: str, *args: object) -> None:
            return None

    with serving(Handler) as url:
        state.url = url
        yield state


def closed_url() -> str:
    """`http://127.0.0.1:PORT` of a port just freed: connections to it are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"

"""A real HTTP server on 127.0.0.1:0 that serves source payloads and can misbehave on purpose."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.fakes.serving import send, serving


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    etag: str = ""
    delay: float = 0.0
    content_type: str = "application/json"


@dataclass
class SourceServer:
    url: str
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def serve(self, path: str, body: str | bytes, **options: object) -> str:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Route(data, **options)  # type: ignore[arg-type]
        return self.url + path

    def hits(self, path: str) -> list[dict[str, str]]:
        return [headers for p, headers in self.requests if p == path]


@contextmanager
def source_server() -> Iterator[SourceServer]:
    state = SourceServer("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            state.requests.append((path, {k: v for k, v in self.headers.items()}))
            route = state.routes.get(path)
            if route is None:
                self.send_error(404)
                return
            if route.delay:
                time.sleep(route.delay)
            if route.etag and self.headers.get("If-None-Match") == route.etag:
                self.send_response(304)
                self.send_header("ETag", route.etag)
                self.end_headers()
                return
            send(self, route.status, route.body, route.content_type, {"ETag": route.etag} if route.etag else {})

        def log_message(self, format: str, *args: object) -> None:
            return None

    with serving(Handler) as url:
        state.url = url
        yield state

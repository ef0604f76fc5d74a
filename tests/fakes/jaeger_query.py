"""A Jaeger query service, as far as `GET /api/dependencies` goes, on a real loopback socket.

It holds calls as (parent, child, calls, when) and answers as Jaeger's handler does
(cmd/jaeger/internal/extension/jaegerquery/internal/http_handler.go): the links of the calls made
in the `lookback` milliseconds before `endTs` (defaults: now and 24 h), summed per (parent, child),
in the `{"data": [...], "total", "limit", "offset", "errors"}` envelope; or as jaeger-ui's sample
files are, a bare array; `callCount` a number, or a string as protojson writes a uint64. `answers`
queues misbehaviour for the next requests: a status and a body, sent as they are.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from tests.fakes.serving import send, serving

DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class Call:
    parent: str
    child: str
    calls: int
    at: datetime


@dataclass
class JaegerQuery:
    url: str = ""
    calls: list[Call] = field(default_factory=list)
    bare: bool = False  # answer a bare array, as jaeger-ui's sample data
    string_counts: bool = False  # callCount as a string, as protojson writes a uint64
    answers: list[tuple[int, bytes]] = field(default_factory=list)  # (status, body) for the next requests
    requests: list[tuple[dict[str, str], dict[str, str]]] = field(default_factory=list)  # (params, headers)

    def links(self, end_ms: int, lookback_ms: int) -> list[dict[str, object]]:
        summed: dict[tuple[str, str], int] = {}
        for c in self.calls:
            if end_ms - lookback_ms <= c.at.timestamp() * 1000 <= end_ms:
                summed[(c.parent, c.child)] = summed.get((c.parent, c.child), 0) + c.calls
        return [
            {"parent": p, "child": c, "callCount": str(n) if self.string_counts else n} for (p, c), n in summed.items()
        ]


@contextmanager
def jaeger_query(path_prefix: str = "") -> Iterator[JaegerQuery]:
    """The fake, its API under `path_prefix` (Jaeger's `--query.base-path`); `url` includes it."""
    state = JaegerQuery()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            state.requests.append((params, dict(self.headers.items())))
            if parts.path != f"{path_prefix}/api/dependencies":
                send(self, 404, b"404 page not found\n", "text/plain", {})
                return
            if state.answers:
                status, body = state.answers.pop(0)
                send(self, status, body, "application/json", {})
                return
            try:
                end, lookback = int(params.get("endTs", time.time() * 1000)), int(params.get("lookback", DAY_MS))
            except ValueError as exc:
                error = {"data": None, "total": 0, "limit": 0, "offset": 0, "errors": [{"code": 400, "msg": str(exc)}]}
                send(self, 400, json.dumps(error).encode(), "application/json", {})
                return
            links = state.links(end, lookback)
            body = links if state.bare else {"data": links, "total": 0, "limit": 0, "offset": 0, "errors": None}
            send(self, 200, json.dumps(body).encode(), "application/json", {})

        def log_message(self, format: str, *args: object) -> None:
            return None

    with serving(Handler) as url:
        state.url = url + path_prefix
        yield state

"""A fake Anthropic Messages API on 127.0.0.1:0 (point ANTHROPIC_BASE_URL at its `url`).

It speaks the wire format of `POST /v1/messages` and `POST /v1/messages/count_tokens`: replies
with text or tool_use content blocks and a `usage` object, errors as `{"type": "error", "error":
{"type", "message"}}` with Anthropic's status codes (429 rate_limit_error with retry-after, 529
overloaded_error, 500 api_error, 400 invalid_request_error, 401 authentication_error).

Each test scripts what the next calls get: `fake.queue(...)` appends behaviours used in order;
when the queue is empty, `fake.responder(request_body)` decides (by default: a short text reply).
Every request is recorded, and `wait_for` wakes on each one so tests never sleep or poll.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.serving import send, serving

Json = dict[str, Any]
API_KEY = "sk-ant-test-key"
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Reply:
    """One scripted answer: content blocks, or an HTTP error, optionally after a delay."""

    content: tuple[Json, ...] = ()
    status: int = 200
    delay: float = 0.0  # seconds before answering: longer than the client's timeout = a timeout
    raw: bytes | None = None  # sent as-is (malformed bodies)
    stop_reason: str = "end_turn"
    usage: Json = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})


def text(answer: str, **kw: Any) -> Reply:
    return Reply(content=({"type": "text", "text": answer},), **kw)


def tool_use(name: str, tool_input: Json, **kw: Any) -> Reply:
    block = {"type": "tool_use", "id": "toolu_fake01", "name": name, "input": tool_input}
    return Reply(content=(block,), stop_reason="tool_use", **kw)


def error(status: int, message: str = "fake error", **kw: Any) -> Reply:
    return Reply(status=status, raw=None, content=({"message": message},), **kw)


def _default_responder(_body: Json) -> Reply:
    return text("Not in the graph.")


@dataclass(frozen=True)
class Call:
    path: str
    body: Json
    headers: dict[str, str]


@dataclass
class FakeAnthropic:
    url: str = ""
    calls: list[Call] = field(default_factory=list)
    responder: Callable[[Json], Reply] = _default_responder
    _script: deque[Reply] = field(default_factory=deque)
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def queue(self, *replies: Reply) -> None:
        with self._changed:
            self._script.extend(replies)

    def messages(self) -> list[Call]:
        return [c for c in self.calls if c.path == "/v1/messages"]

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Call]:
        """The first `count` calls to /v1/messages, waiting up to `timeout` seconds for them."""
        with self._changed:
            self._changed.wait_for(lambda: len(self.messages()) >= count, timeout=timeout)
            return self.messages()

    def _next(self, body: Json) -> Reply:
        with self._changed:
            if self._script:
                return self._script.popleft()
        return self.responder(body)

    def _record(self, call: Call) -> None:
        with self._changed:
            self.calls.append(call)
            self._changed.notify_all()

    def handle(self, path: str, body: Json, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        self._record(Call(path, body, headers))
        # Older SDKs send x-api-key, newer ones a bearer token: both are the API key.
        if API_KEY not in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer ")):
            return _error(401, "invalid x-api-key")
        if not headers.get("anthropic-version"):
            return _error(400, "anthropic-version header is required")
        if path == "/v1/messages/count_tokens":
            size = len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("system", "")))
            return 200, json.dumps({"input_tokens": max(1, size // 4)}).encode(), {}
        if path != "/v1/messages":
            return _error(404, f"no such endpoint {path}")
        reply = self._next(body)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.raw is not None:
            return reply.status, reply.raw, {}
        if reply.status != 200:
            message = str(reply.content[0].get("message", "fake error")) if reply.content else "fake error"
            extra = {"retry-after": "0"} if reply.status == 429 else {}
            status, data, _ = _error(reply.status, message)
            return status, data, extra
        message_id = f"msg_fake{next(self._ids):04d}"
        data = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": list(reply.content),
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": reply.usage,
        }
        return 200, json.dumps(data).encode(), {"request-id": f"req_{message_id}"}


def _error(status: int, message: str) -> tuple[int, bytes, dict[str, str]]:
    kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    data = {"type": "error", "error": {"type": kind, "message": message}}
    return status, json.dumps(data).encode(), {}


def _handler(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                status, data, extra = _error(400, "body is not JSON")
            else:
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, data, extra = fake.handle(self.path.split("?", 1)[0], body, headers)
            # The client may have given up (its timeout): what a real server sees too.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                send(self, status, data, "application/json", extra)

        def log_message(self, *_args: Any) -> None:
            pass

    return Handler


@contextmanager
def anthropic_api() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic()
    with serving(_handler(fake)) as url:
        fake.url = url
        yield fake

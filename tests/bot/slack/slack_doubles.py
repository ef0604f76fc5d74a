"""Small recording stand-ins for the parts of Slack's API a handler is handed: `ack`, `respond` and the
Web API client. They record what a handler sent, the way the fake Slack server does over HTTP, so a
handler can be called as a plain function. Each can be told to fail its next calls the way Slack does.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse
from slack_sdk.webhook import WebhookResponse

Json = dict[str, Any]


@dataclass
class RecordingAck:
    calls: list[Json] = field(default_factory=list)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append({"args": args, **kwargs})


@dataclass
class RecordingRespond:
    """`respond(...)`: a POST to the command's response_url. `fail_next(status)` answers that status."""

    sent: list[Json] = field(default_factory=list)  # accepted posts only
    attempts: int = 0
    _failures: deque[int | BaseException] = field(default_factory=deque)

    def fail_next(self, failure: int | BaseException) -> None:
        self._failures.append(failure)

    def __call__(self, **kwargs: Any) -> WebhookResponse:
        self.attempts += 1
        failure = self._failures.popleft() if self._failures else 200
        if isinstance(failure, BaseException):
            raise failure
        if failure == 200:
            self.sent.append(kwargs)
        return WebhookResponse(url="https://hooks.example/r", status_code=failure, body="ok", headers={})


@dataclass
class RecordingClient:
    """The Web API methods handlers call; each accepted call is kept in `calls` as (method, arguments)."""

    calls: list[tuple[str, Json]] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)
    history: list[Json] = field(default_factory=list)  # what conversations_history returns
    _failures: dict[str, deque[Json | BaseException]] = field(default_factory=dict)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def fail_next(self, method: str, failure: Json | BaseException) -> None:
        """The next call of `method` gets `failure`: a reply (`{"ok": False, "error": ...}`, with an
        optional `status` and `headers`) raised as SlackApiError, as slack_sdk does; or an exception."""
        self._failures.setdefault(method, deque()).append(failure)

    def posted(self, method: str = "chat_postMessage") -> list[Json]:
        return [kwargs for name, kwargs in self.calls if name == method]

    def _call(self, method: str, kwargs: Json, reply: Json) -> SlackResponse:
        self.attempts.append(method)
        failures = self._failures.get(method)
        if failures:
            failure = failures.popleft()
            if isinstance(failure, BaseException):
                raise failure
            status, headers = int(failure.get("status", 200)), dict(failure.get("headers", {}))
            body = {k: v for k, v in failure.items() if k not in ("status", "headers")}
            response = SlackResponse(client=None, http_verb="POST", api_url=method, req_args={}, data=body,
                                     headers=headers, status_code=status)  # fmt: skip
            raise SlackApiError(f"The request to the Slack API failed: {body}", response)
        self.calls.append((method, kwargs))
        return SlackResponse(client=None, http_verb="POST", api_url=method, req_args={}, data=reply, headers={},
                             status_code=200)  # fmt: skip

    def chat_postMessage(self, **kwargs: Any) -> SlackResponse:
        ts = f"1767225600.{next(self._ts):06d}"
        return self._call("chat_postMessage", kwargs, {"ok": True, "channel": kwargs.get("channel"), "ts": ts})

    def conversations_open(self, **kwargs: Any) -> SlackResponse:
        return self._call("conversations_open", kwargs, {"ok": True, "channel": {"id": f"D{kwargs.get('users')}"}})

    def files_upload_v2(self, **kwargs: Any) -> SlackResponse:
        return self._call("files_upload_v2", kwargs, {"ok": True, "files": [{"id": "F1"}]})

    # The assistant pane, unfurls and App Home: accepted and kept, as the fake Slack API does over HTTP.
    def assistant_threads_setStatus(self, **kwargs: Any) -> SlackResponse:
        return self._call("assistant_threads_setStatus", kwargs, {"ok": True})

    def assistant_threads_setTitle(self, **kwargs: Any) -> SlackResponse:
        return self._call("assistant_threads_setTitle", kwargs, {"ok": True})

    def assistant_threads_setSuggestedPrompts(self, **kwargs: Any) -> SlackResponse:
        return self._call("assistant_threads_setSuggestedPrompts", kwargs, {"ok": True})

    def chat_unfurl(self, **kwargs: Any) -> SlackResponse:
        return self._call("chat_unfurl", kwargs, {"ok": True})

    def views_publish(self, **kwargs: Any) -> SlackResponse:
        return self._call("views_publish", kwargs, {"ok": True})

    def conversations_history(self, **kwargs: Any) -> SlackResponse:
        return self._call("conversations_history", kwargs, {"ok": True, "messages": self.history})


@dataclass
class MemoryClaims:
    """Delivery claims kept in a dict, with the states of `sync/store/deliveries.py` (claimed, then
    delivered or failed; only a failed key is taken again). The store itself is tested on SQLite and
    PostgreSQL, and end to end through the bot; here a handler's use of it is looked at."""

    states: dict[str, str] = field(default_factory=dict)

    def take(self, key: str) -> bool:
        if self.states.get(key) in ("claimed", "delivered"):
            return False
        self.states[key] = "claimed"
        return True

    def settle(self, key: str, delivered: bool) -> None:
        if self.states.get(key) == "claimed":
            self.states[key] = "delivered" if delivered else "failed"

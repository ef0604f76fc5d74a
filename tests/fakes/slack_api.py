"""A fake Slack Web API on 127.0.0.1:0 for end-to-end tests of the bot.

Point `WebClient(base_url=fake.url)` (or SLACK_API_URL) at it. It answers the methods the bot uses
the way Slack does (HTTP 200 with `ok: false` for API errors, 429 + Retry-After when rate limited),
records every request (with the moment it arrived), serves the upload URLs of `files_upload_v2` and
the `response_url`s of slash commands, checks and records the assistant pane's methods
(`assistant.threads.setSuggestedPrompts`, `setStatus`, `setTitle`), `chat.unfurl` and `views.publish`,
returns what a test put in `history` from `conversations.history`, and wakes `wait_for` on each
request so tests never sleep or poll. `fail_next` makes the next request for a name fail as Slack or
a network can: `ok: false` with an error, an HTTP status (with Retry-After), or a connection reset
before any answer.
"""

from __future__ import annotations

import itertools
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fakes.serving import send, serving

Json = dict[str, Any]

BOT_USER = "UBOT"
BOT_ID = "BBOT"
TEAM_ID = "T0FAKE"
AUTH_TEST: Json = {
    "ok": True,
    "url": "https://fake-workspace.slack.com/",
    "team": "Fake Workspace",
    "user": "oncall-graph",
    "team_id": TEAM_ID,
    "user_id": BOT_USER,
    "bot_id": BOT_ID,
}
# Form-encoded clients send these as JSON strings; tests want to look inside them.
_JSON_FIELDS = ("blocks", "attachments", "files", "metadata", "prompts", "unfurls", "view")
_CHAT = ("chat.postMessage", "chat.postEphemeral", "chat.update")
# The assistant pane's methods: each names its thread (the prompts also take a list of up to four).
_ASSISTANT = ("assistant.threads.setSuggestedPrompts", "assistant.threads.setStatus", "assistant.threads.setTitle")
_ASSISTANT_NEEDS = {
    "assistant.threads.setSuggestedPrompts": "prompts",
    "assistant.threads.setStatus": "status",
    "assistant.threads.setTitle": "title",
}
MAX_PROMPTS = 4
# Retired by Slack in 2025; a bot still calling it would fail in production.
_RETIRED = ("files.upload",)


@dataclass(frozen=True)
class Request:
    """One request as received: `name` is the API method, `upload/<file id>` or `response/<name>`."""

    name: str
    body: Json
    headers: dict[str, str]
    accepted: bool  # Slack would have acted on it: HTTP 200 and, for API methods, `ok: true`
    raw: bytes = b""
    reply: Json | None = None
    at: float = 0.0  # time.monotonic() when it arrived: the fake's own clock for the gaps between retries


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


RESET = Answer(0, b"")  # no answer at all: the connection is reset (RST) once the request is read


@dataclass
class FakeSlack:
    url: str
    require_token: bool = True
    socket_url: str = ""  # what apps.connections.open hands out (a fake Socket Mode server's ws:// URL)
    requests: list[Request] = field(default_factory=list)
    # What conversations.history returns per channel, newest first, as tests put it there.
    history: dict[str, list[Json]] = field(default_factory=dict)
    _failures: dict[str, deque[Answer]] = field(default_factory=dict)
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _changed: threading.Condition = field(default_factory=lambda: threading.Condition(threading.RLock()))

    def response_url(self, name: str) -> str:
        """A `response_url` to put in a slash-command payload; POSTs to it show up in `responses(name)`."""
        return f"{self.url}response/{name}"

    def fail_next(
        self,
        name: str,
        status: int = 429,
        retry_after: int | None = 1,
        *,
        error: str = "",
        reset: bool = False,
        times: int = 1,
    ) -> None:
        """Answer the next `times` requests for `name` with `status` (and Retry-After) instead of serving
        them: `ok: false` with `error` (by default `ratelimited` for 429, else `internal_error`; a 200
        with an error is how Slack refuses a call), or with `reset` no answer but a reset connection."""
        error = error or ("ratelimited" if status == 429 else "internal_error")
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        failure = RESET if reset else _json(status, {"ok": False, "error": error}, headers)
        with self._changed:
            self._failures.setdefault(name, deque()).extend([failure] * times)

    def attempts(self, name: str) -> list[Request]:
        """Every request for `name`, failed ones included, in arrival order."""
        with self._changed:
            return [r for r in self.requests if r.name == name]

    def calls(self) -> list[str]:
        """Every request's name in arrival order, refused and failed ones included."""
        with self._changed:
            return [r.name for r in self.requests]

    def posted(self, method: str) -> list[Json]:
        """Bodies of the accepted calls of `method`, in arrival order."""
        with self._changed:
            return [r.body for r in self.requests if r.name == method and r.accepted]

    def responses(self, name: str | None = None) -> list[Json]:
        """Bodies POSTed to response URLs (only `name`'s when given)."""
        with self._changed:
            return [
                r.body
                for r in self.requests
                if r.accepted and r.name.startswith("response/") and name in (None, r.name.removeprefix("response/"))
            ]

    def uploads(self, *, pending: bool = False) -> list[Json]:
        """Files shared through `files_upload_v2`, its three steps joined: `content` is the text (`data` the
        bytes), with `channel` and `thread_ts`. Only completed ones unless `pending`: those were never shared."""
        with self._changed:
            accepted = [r for r in self.requests if r.accepted]
        files: dict[str, Json] = {}
        for r in accepted:
            if r.name == "files.getUploadURLExternal" and r.reply is not None:
                files[r.reply["file_id"]] = _upload(r.reply["file_id"], r.body.get("filename"))
            elif r.name.startswith("upload/") and r.name.removeprefix("upload/") in files:
                files[r.name.removeprefix("upload/")].update(data=r.raw, content=r.raw.decode(errors="replace"))
            elif r.name == "files.completeUploadExternal":
                shared = {
                    "channel": r.body.get("channel_id") or r.body.get("channels"),
                    "thread_ts": r.body.get("thread_ts"),
                    "initial_comment": r.body.get("initial_comment"),
                    "completed": True,
                }
                for item in r.body.get("files", []):
                    if item.get("id") in files:
                        files[item["id"]].update(shared, title=item.get("title"))
        return [f for f in files.values() if pending or f["completed"]]

    def wait_for(self, predicate: Callable[[], object], timeout: float = 10) -> None:
        """Block until `predicate()` is truthy, re-checking on each request; AssertionError on timeout.

        A request counts once recorded, which is just before its reply is sent back."""
        with self._changed:
            if not self._changed.wait_for(lambda: bool(predicate()), timeout=timeout):
                raise AssertionError(f"fake Slack: condition not met within {timeout}s; calls: {self.calls()}")

    def answer(self, path: str, query: str, headers: dict[str, str], raw: bytes) -> Answer:
        name = path.removeprefix("/api/")
        if name == path:
            return _json(404, {"ok": False, "error": "not_found"})
        try:
            body, malformed = _parse_body(query, headers.get("content-type", ""), raw), False
        except ValueError:
            body, malformed = {}, True
        if name.startswith("upload/"):
            # Upload URLs take the file's raw bytes whatever the content type says (slack_sdk sends
            # binary files as form-encoded); `uploads()` reads them from `raw`.
            body, malformed = {}, False
        with self._changed:
            answer = self._answer(name, body, headers, raw, malformed)
            self._changed.notify_all()
        return answer

    def _answer(self, name: str, body: Json, headers: dict[str, str], raw: bytes, malformed: bool) -> Answer:
        failures = self._failures.get(name)
        open_path = name.startswith(("upload/", "response/"))
        if failures:
            answer = failures.popleft()
        elif malformed:
            answer = _json(200, {"ok": False, "error": "invalid_json"})
        elif self.require_token and not open_path and not _token_fits(name, headers.get("authorization", "")):
            answer = _json(200, {"ok": False, "error": "invalid_auth"})
        elif name.startswith("upload/"):
            answer = Answer(200, f"OK - {len(raw)}".encode(), content_type="text/plain")
        elif name.startswith("response/"):
            answer = Answer(200, b"ok", content_type="text/plain")
        else:
            answer = _json(200, self._reply(name, body))
        json_body = answer.content_type.startswith("application/json") and answer.body
        reply = json.loads(answer.body) if json_body else None
        accepted = answer.status == 200 and (reply is None or reply.get("ok") is True)
        self.requests.append(Request(name, body, headers, accepted, raw, reply, time.monotonic()))
        return answer

    def _reply(self, name: str, body: Json) -> Json:
        if name in _CHAT:
            return self._chat_reply(name, body)
        if name == "auth.test":
            return AUTH_TEST
        if name == "apps.connections.open":
            return {"ok": True, "url": self.socket_url} if self.socket_url else {"ok": False, "error": "not_allowed"}
        if name == "files.getUploadURLExternal":
            file_id = f"F{next(self._counter):08d}"
            return {"ok": True, "upload_url": f"{self.url}upload/{file_id}", "file_id": file_id}
        if name == "files.completeUploadExternal":
            return {"ok": True, "files": [{"id": f.get("id"), "title": f.get("title")} for f in body.get("files", [])]}
        if name == "conversations.info":
            channel = str(body.get("channel", ""))
            if not channel:
                return {"ok": False, "error": "channel_not_found"}
            info = {"id": channel, "name": f"chan-{channel.lower()}", "is_private": channel.startswith("G")}
            return {"ok": True, "channel": {**info, "is_channel": True, "is_member": True}}
        if name == "conversations.open":
            # The bot opens a DM with one user; Slack's DM ids start with D.
            return {"ok": True, "channel": {"id": f"D{str(body.get('users', '')).split(',')[0]}"}}
        if name == "users.info":
            user = str(body.get("user", ""))
            if not user:
                return {"ok": False, "error": "user_not_found"}
            profile = {"display_name": f"user-{user.lower()}", "real_name": f"User {user}"}
            return {
                "ok": True,
                "user": {
                    "id": user,
                    "name": profile["display_name"],
                    "is_bot": False,
                    "real_name": profile["real_name"],
                    "profile": profile,
                },
            }
        if name in _ASSISTANT:
            return _assistant_reply(name, body)
        if name == "chat.unfurl":
            return _unfurl_reply(body)
        if name == "views.publish":
            return _publish_reply(body)
        if name == "conversations.history":
            return self._history_reply(body)
        if name in _RETIRED:
            return {"ok": False, "error": "method_deprecated"}
        return {"ok": True}

    def _history_reply(self, body: Json) -> Json:
        channel = str(body.get("channel", ""))
        if channel not in self.history:
            return {"ok": False, "error": "channel_not_found" if not channel else "not_in_channel"}
        oldest = float(body.get("oldest") or 0)
        limit = int(body.get("limit") or 100)
        messages = [m for m in self.history[channel] if float(m.get("ts", 0)) > oldest][:limit]
        return {"ok": True, "messages": messages, "has_more": False}

    def _chat_reply(self, name: str, body: Json) -> Json:
        if not body.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if name == "chat.update" and not body.get("ts"):
            return {"ok": False, "error": "message_not_found"}
        if not (body.get("text") or body.get("blocks") or body.get("attachments")):
            return {"ok": False, "error": "no_text"}
        # chat.update keeps the message's ts; the others create a new message.
        ts = str(body.get("ts")) if name == "chat.update" else f"1767225600.{next(self._counter):06d}"
        message = {"type": "message", "text": body.get("text", ""), "user": BOT_USER, "bot_id": BOT_ID, "ts": ts}
        for key in ("blocks", "thread_ts"):
            if key in body:
                message[key] = body[key]
        reply: Json = {"ok": True, "channel": body["channel"], "ts": ts, "message": message}
        if name == "chat.postEphemeral":
            reply["message_ts"] = ts
        return reply


def _assistant_reply(name: str, body: Json) -> Json:
    """Slack's checks as its docs list them: the thread, then what the method sets."""
    if not body.get("channel_id"):
        return {"ok": False, "error": "channel_not_found"}
    if not body.get("thread_ts"):
        return {"ok": False, "error": "invalid_thread_ts"}
    needed = body.get(_ASSISTANT_NEEDS[name])
    if not needed:
        return {"ok": False, "error": "invalid_arguments"}
    if name == "assistant.threads.setSuggestedPrompts":
        fine = isinstance(needed, list) and 0 < len(needed) <= MAX_PROMPTS
        if not fine or not all(isinstance(p, dict) and p.get("title") and p.get("message") for p in needed):
            return {"ok": False, "error": "invalid_arguments"}
    return {"ok": True}


def _unfurl_reply(body: Json) -> Json:
    """chat.unfurl: a posted message (channel and ts) or a composer's preview (unfurl_id and source),
    and a map of each URL to its unfurl."""
    if not ((body.get("channel") and body.get("ts")) or (body.get("unfurl_id") and body.get("source"))):
        return {"ok": False, "error": "cannot_unfurl_message"}
    unfurls = body.get("unfurls")
    if not isinstance(unfurls, dict) or not unfurls:
        return {"ok": False, "error": "invalid_unfurls_format"}
    return {"ok": True}


def _publish_reply(body: Json) -> Json:
    view = body.get("view")
    if not body.get("user_id"):
        return {"ok": False, "error": "user_not_found"}
    if not isinstance(view, dict) or view.get("type") != "home" or not isinstance(view.get("blocks"), list):
        return {"ok": False, "error": "invalid_arguments"}
    return {"ok": True, "view": {"id": f"V{body['user_id']}", **view}}


def _token_fits(method: str, authorization: str) -> bool:
    """Socket Mode connections take the app-level token (xapp-); every other method a bot token."""
    prefix = "Bearer xapp-" if method == "apps.connections.open" else "Bearer xoxb-"
    return authorization.startswith(prefix)


def _upload(file_id: str, filename: str | None) -> Json:
    return {
        "file_id": file_id,
        "filename": filename,
        "title": None,
        "content": None,
        "data": None,
        "channel": None,
        "thread_ts": None,
        "initial_comment": None,
        "completed": False,
    }


def _json(status: int, body: Json, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, json.dumps(body).encode(), headers or {})


def _parse_body(query: str, content_type: str, raw: bytes) -> Json:
    body: Json = dict(parse_qsl(query))
    if content_type.startswith("application/json"):
        parsed = json.loads(raw or b"{}")
        body.update(parsed if isinstance(parsed, dict) else {"_json": parsed})
    elif content_type.startswith("application/x-www-form-urlencoded"):
        body.update(parse_qsl(raw.decode()))
    for key in _JSON_FIELDS:
        value = body.get(key)
        if isinstance(value, str) and value[:1] in ("[", "{"):
            body[key] = json.loads(value)
    return body


@contextmanager
def slack_api(*, require_token: bool = True) -> Iterator[FakeSlack]:
    """A running fake; `.url` is the Web API base URL (ends in `/`, like `https://slack.com/api/`)."""
    state = FakeSlack("", require_token=require_token)

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            answer = state.answer(parts.path, parts.query, headers, raw)
            if answer is RESET:  # closed with SO_LINGER 0: the client reads a reset, not an answer
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            send(self, answer.status, answer.body, answer.content_type, answer.headers)

        do_GET = do_POST = do_PUT = _serve

        def log_message(self, format: str, *args: object) -> None:
            return None

    with serving(Handler) as url:
        state.url = url + "/api/"
        yield state

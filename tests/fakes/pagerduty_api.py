"""A fake PagerDuty REST API v2 on 127.0.0.1:0: services, business services and their dependencies,
and incidents (`GET /incidents`, filtered by `statuses[]`).

It answers like PagerDuty (classic pagination, `*_reference` types in responses, error objects),
checks the token, records every request, and counts requests in flight so a test can tell
whether the client ever sent two at once. `answer_next` queues canned answers (429, garbage).
"""

from __future__ import annotations

import copy
import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.fakes.serving import send, serving

ACCOUNT = Path(__file__).resolve().parents[1] / "data" / "pagerduty" / "account.json"
TOKEN = "u+test-token-0123"

Json = dict[str, Any]


def load_account() -> Json:
    account: Json = json.loads(ACCOUNT.read_text(encoding="utf-8"))
    return account


@dataclass(frozen=True)
class Request:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    lists: dict[str, list[str]] = field(default_factory=dict)  # every value of each parameter, in order


@dataclass(frozen=True)
class Canned:
    status: int
    body: bytes
    headers: dict[str, str]


@dataclass
class PagerDutyApi:
    url: str
    account: Json
    token: str = TOKEN
    page_size: int = 100  # PagerDuty caps `limit`; a small cap makes pagination testable
    budget: int = 1000  # past this many requests a walk that never ends fails instead of hanging
    requests: list[Request] = field(default_factory=list)
    canned: dict[str, deque[Canned]] = field(default_factory=dict)
    max_in_flight: int = 0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer_next(self, path: str, status: int, body: str | Json = "", headers: dict[str, str] | None = None) -> None:
        """Serve this answer to the next request for `path`, before the account's own."""
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.canned.setdefault(path, deque()).append(Canned(status, data, headers or {}))

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def hits(self, path: str) -> int:
        return self.paths().count(path)

    def answer(
        self, path: str, query: dict[str, str], headers: dict[str, str], lists: dict[str, list[str]] | None = None
    ) -> Canned:
        with self._lock:
            self.requests.append(Request(path, query, headers, lists or {}))
            if len(self.requests) > self.budget:
                return _json(410, {"error": {"message": f"fake: more than {self.budget} requests"}})
            queued = self.canned.get(path)
            if queued:
                return queued.popleft()
        if headers.get("Authorization") != f"Token token={self.token}":
            return _json(401, {"error": {"message": "Unauthorized", "code": 2006}})
        return self._route(path, query, lists or {})

    def _route(self, path: str, query: dict[str, str], lists: dict[str, list[str]]) -> Canned:
        parts = [unquote(p) for p in path.strip("/").split("/")]
        technical = {s["id"]: s for s in self.account["services"]}
        business = {s["id"]: s for s in self.account["business_services"]}
        match parts:
            case ["services"]:
                return self._page("services", query)
            case ["business_services"]:
                return self._page("business_services", query)
            case ["incidents"]:
                # As PagerDuty: without `statuses[]`, incidents of every status.
                wanted = set(lists.get("statuses[]", [])) or {"triggered", "acknowledged", "resolved"}
                listed = [i for i in self.account.get("incidents", []) if i.get("status") in wanted]
                return self._page("incidents", query, listed)
            case ["services", sid] if sid in technical:
                return _json(200, {"service": technical[sid]})
            case ["business_services", sid] if sid in business:
                return _json(200, {"business_service": business[sid]})
            case ["service_dependencies", "technical_services", sid] if sid in technical:
                return _json(200, {"relationships": self._relationships(sid)})
            case ["service_dependencies", "business_services", sid] if sid in business:
                return _json(200, {"relationships": self._relationships(sid)})
        return _json(404, {"error": {"message": "Not Found", "code": 2100}})

    def _relationships(self, sid: str) -> list[Json]:
        return [
            r
            for r in self.account["relationships"]
            if sid in (r["supporting_service"]["id"], r["dependent_service"]["id"])
        ]

    def _page(self, key: str, query: dict[str, str], items: list[Json] | None = None) -> Canned:
        limit = min(int(query.get("limit", "25")), self.page_size)
        offset = int(query.get("offset", "0"))
        items = self.account[key] if items is None else items
        page = items[offset : offset + limit]
        more = offset + len(page) < len(items)
        return _json(200, {key: page, "limit": limit, "offset": offset, "total": None, "more": more})

    def enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


def _json(status: int, body: Json) -> Canned:
    return Canned(status, json.dumps(body).encode(), {})


@contextmanager
def pagerduty_api(account: Json | None = None, *, page_size: int = 100) -> Iterator[PagerDutyApi]:
    """A running fake serving `account` (default: tests/data/pagerduty/account.json)."""
    state = PagerDutyApi("", copy.deepcopy(account) if account is not None else load_account(), page_size=page_size)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            # In flight from arrival until the answer is ready, and out before a byte is sent: a
            # serial client cannot send its next request before then, so it never counts twice.
            state.enter()
            try:
                parts = urlsplit(self.path)
                lists = parse_qs(parts.query)
                query = {k: v[-1] for k, v in lists.items()}
                canned = state.answer(parts.path, query, dict(self.headers.items()), lists)
            finally:
                state.leave()
            send(self, canned.status, canned.body, "application/json", canned.headers)

        def log_message(self, format: str, *args: object) -> None:
            return None

    with serving(Handler) as url:
        state.url = url
        yield state


def incident(number: int, title: str, service_id: str, *, status: str = "triggered", urgency: str = "high") -> Json:
    """An incident as `GET /incidents` lists it (the REST API v2 reference's example, trimmed)."""
    ident = f"Q{number:04d}INC"
    return {
        "id": ident, "type": "incident", "summary": f"[#{number}] {title}",
        "self": f"https://api.pagerduty.com/incidents/{ident}", "html_url": f"https://acme.pagerduty.com/incidents/{ident}",
        "incident_number": number, "title": title, "created_at": "2026-12-06T03:00:00Z", "status": status,
        "incident_key": f"key-{number}", "urgency": urgency,
        "service": {"id": service_id, "type": "service_reference", "summary": service_id,
                    "self": f"https://api.pagerduty.com/services/{service_id}",
                    "html_url": f"https://acme.pagerduty.com/service-directory/{service_id}"},
        "assignments": [], "acknowledgements": [], "last_status_change_at": "2026-12-06T03:00:00Z",
        "escalation_policy": {"id": "PEP0001", "type": "escalation_policy_reference"}, "teams": [], "priority": None,
    }  # fmt: skip

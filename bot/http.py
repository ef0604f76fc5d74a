"""The HTTP face: /slack/events (Bolt), /healthz and /metrics, served by waitress (a production
WSGI server, threaded, in this one process alongside the sync scheduler).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from prometheus_client import CollectorRegistry, make_wsgi_app

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
MAX_BODY = 1024 * 1024  # every webhook reads at most this much of a body (413 past it)
# A signed Slack event is read whole up to this, so that one too large to read whole (an alert
# with thousands of attachments) is still verified and answered from its first parts.
SLACK_MAX_BODY = 8 * MAX_BODY
# waitress refuses anything past this itself (bot/http_server: the rest read and thrown away, within a
# bound, so the client sees the 413); below it a handler answers its own 413.
SERVER_BODY_CAP = SLACK_MAX_BODY + 1


def read_capped(environ: Mapping[str, Any], limit: int) -> bytes | None:
    """The raw body, exactly as sent (signatures are over these bytes); None when over `limit`,
    read no further than `limit + 1` bytes whatever the Content-Length claims (or chunked: none)."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or -1)
    except ValueError:
        length = -1
    if length > limit:
        return None
    stream = environ["wsgi.input"]
    raw: bytes = stream.read(length) if length >= 0 else stream.read(limit + 1)
    return raw if len(raw) <= limit else None


def json_response(start_response: StartResponse, status: str, body: dict[str, Any]) -> list[bytes]:
    """A JSON answer; a 405 names the one method every endpoint here takes."""
    data = json.dumps(body).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    if status.startswith("405"):
        headers.append(("Allow", "POST"))
    start_response(status, headers)
    return [data]


def counted_while_handled(app: WsgiApp, handling: Callable[[], AbstractContextManager[object]]) -> WsgiApp:
    """`app`, each request inside `handling()` (the answer slots' `arriving`)."""

    def counted(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        with handling():
            return list(app(environ, start_response))

    return counted


def build_wsgi(
    slack: WsgiApp | None,
    *,
    health: Callable[[], dict[str, Any]],
    registry: CollectorRegistry,
    pagerduty: WsgiApp | None = None,
    webhooks: Mapping[str, WsgiApp] | None = None,
    metrics_here: bool = True,
) -> WsgiApp:
    """`health()` returns a dict with `ready`; /healthz answers 503 until a snapshot is loaded.
    With `metrics_here` false, /metrics is served only by `metrics_wsgi` on its own port."""
    metrics = metrics_wsgi(registry) if metrics_here else None
    pushed = dict(webhooks or {})  # path -> app of each deploy webhook that is on

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/slack/events" and slack is not None:
            return slack(environ, start_response)
        if path == "/pagerduty/webhook" and pagerduty is not None:
            return pagerduty(environ, start_response)
        if path in pushed:
            return pushed[path](environ, start_response)
        if path == "/healthz":
            state = health()
            return json_response(start_response, "200 OK" if state.get("ready") else "503 Service Unavailable", state)
        if path == "/metrics" and metrics is not None:
            body: Iterable[bytes] = metrics(environ, start_response)
            return body
        return json_response(start_response, "404 Not Found", {"error": "not found"})

    return app


def metrics_wsgi(registry: CollectorRegistry) -> WsgiApp:
    """/metrics alone (anything else 404): for the main port, or the metrics port of its own."""
    exposition = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "") != "/metrics":
            return json_response(start_response, "404 Not Found", {"error": "not found"})
        body: Iterable[bytes] = exposition(environ, start_response)
        return body

    return app

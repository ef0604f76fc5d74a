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
) -> WsgiApp:
    """`health()` returns a dict with `ready`; /healthz answers 503 until a snapshot is loaded."""
    metrics = make_wsgi_app(registry)
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
        if path == "/metrics":
            body: Iterable[bytes] = metrics(environ, start_response)
            return body
        return json_response(start_response, "404 Not Found", {"error": "not found"})

    return app

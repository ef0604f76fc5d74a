"""POST /pagerduty/webhook: PagerDuty v3 webhooks in, the suspects view of each triggered incident
out to Slack.

PagerDuty wants a 2xx within 5 seconds and retries on timeouts and 5xx (docs: webhooks
"Behavior"), so the request thread only checks and acknowledges — size, signature, JSON, event
type, all in memory — and answers 202; a small worker pool then claims the incident in the
database, walks the graph and posts. The claim is not made in the request thread because a
database write can wait (SQLite's busy timeout is 15 s while a sync writes).

Answers: 202 accepted or ignored (any event type but incident.triggered); 400 a body that is not
a v3 event (PagerDuty does not retry 4xx); 401 a missing or wrong signature; 405 not a POST;
413 a body over 256 KB (PagerDuty drops larger webhooks itself); 503 no graph loaded yet or
shutting down (PagerDuty retries). Without PAGERDUTY_WEBHOOK_SECRETS the path is not served (404).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_sdk import WebClient

from bot.http import StartResponse, json_response, read_capped
from bot.pagerduty.channel import parse_channel_map
from bot.pagerduty.incident_reply import FAILED, IncidentRouting, answer_incident
from bot.pagerduty.payload import Incident, WebhookPayloadError, parse_webhook
from bot.pagerduty.signature import verify
from bot.settings import Settings, split_list
from bot.slack.deps import BotDeps

log = logging.getLogger(__name__)

PATH = "/pagerduty/webhook"
MAX_BODY = 256 * 1024
WORKERS = 4  # posts wait on Slack in parallel; the graph work itself shares deps.work_slots


class PagerDutyWebhook:
    """The WSGI app for PATH, with its worker pool; `close()` lets in-flight posts finish."""

    def __init__(self, deps: BotDeps, client: WebClient, *, secrets: Sequence[str], routing: IncidentRouting) -> None:
        self._deps = deps
        self._client = client
        self._secrets = tuple(secrets)
        self._routing = routing
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="pagerduty-webhook")

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        status, body = self._handle(environ)
        return json_response(start_response, status, body)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def _handle(self, environ: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if environ.get("REQUEST_METHOD") != "POST":
            return "405 Method Not Allowed", {"error": "POST a PagerDuty v3 webhook here"}
        raw = _read_body(environ)
        if raw is None:
            self._count("rejected_size")
            return "413 Content Too Large", {"error": f"body over {MAX_BODY} bytes"}
        if not verify(raw, environ.get("HTTP_X_PAGERDUTY_SIGNATURE"), self._secrets):
            self._count("rejected_signature")
            log.warning("PagerDuty webhook refused: no X-PagerDuty-Signature matches PAGERDUTY_WEBHOOK_SECRETS")
            return "401 Unauthorized", {"error": "missing or invalid X-PagerDuty-Signature"}
        try:
            event = parse_webhook(raw)
        except WebhookPayloadError as exc:
            self._count("rejected_payload")
            log.warning("PagerDuty webhook refused: %s", exc)
            return "400 Bad Request", {"error": str(exc)}
        if event.incident is None:
            self._count("ignored")
            return "202 Accepted", {"status": "ignored", "event_type": event.event_type}
        if self._deps.snapshot() is None:
            self._count("unavailable")
            return "503 Service Unavailable", {"error": "no graph loaded yet; retry later"}
        try:
            self._pool.submit(self._work, event.incident)
        except RuntimeError:  # the pool is shut down: the server is stopping
            self._count("unavailable")
            return "503 Service Unavailable", {"error": "shutting down; retry later"}
        return "202 Accepted", {"status": "accepted", "incident": event.incident.id}

    def _work(self, incident: Incident) -> None:
        try:
            outcome = answer_incident(self._deps, self._client, self._routing, incident)
        except Exception:
            log.exception("answering PagerDuty incident %s failed", incident.id)
            outcome = FAILED
        self._count(outcome)

    def _count(self, outcome: str) -> None:
        self._deps.metrics.pagerduty_webhooks.labels(outcome).inc()


def _read_body(environ: dict[str, Any]) -> bytes | None:
    """The raw body, exactly as sent (the signature is over these bytes); None when over MAX_BODY."""
    return read_capped(environ, MAX_BODY)


def build_webhook(settings: Settings, deps: BotDeps, client: WebClient | None) -> PagerDutyWebhook | None:
    """The endpoint when PAGERDUTY_WEBHOOK_SECRETS is set and Slack is configured; raises ValueError
    on a bad ONCALL_GRAPH_PAGERDUTY_CHANNELS."""
    secrets = split_list(settings.pagerduty_webhook_secrets)
    if not secrets:
        return None
    routing = IncidentRouting(parse_channel_map(settings.pagerduty_channels), settings.alert_channel)
    if client is None:
        log.warning("PAGERDUTY_WEBHOOK_SECRETS is set but SLACK_BOT_TOKEN is not: %s is not served", PATH)
        return None
    log.info("PagerDuty webhooks at %s (%d signing secrets)", PATH, len(secrets))
    return PagerDutyWebhook(deps, client, secrets=secrets, routing=routing)

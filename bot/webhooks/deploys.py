"""POST /webhooks/github and POST /webhooks/deploys: deploy events pushed in, stored as facts of
their own push source and in answers as soon as this replica's snapshot is swapped.

The request thread checks everything in memory first — method, size, signature or token, event
type, JSON shape — then stores the delivery in one transaction and answers 202; the snapshot is
refreshed in the background. Answers: 200 a GitHub `ping`; 202 stored, repeated (a redelivery
stores nothing new) or ignored (another GitHub event, a status other than success); 400 a bad
body, naming the field; 401 unsigned, wrongly signed or a wrong token; 405 not a POST; 413 a body
over MAX_BODY; 503 the store could not be written (the sender retries). Never a 500. A path
whose secret is unset is not served (404). A 400 is recorded in the store (lag shows the last);
a 401 or 413, which anyone can cause at will, is counted and kept in memory only
(`bot/webhooks/refusals`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from bot.http import MAX_BODY as SERVER_MAX_BODY
from bot.http import StartResponse, WsgiApp, json_response, read_capped
from bot.settings import Settings, split_list
from bot.telemetry.metrics import Metrics
from bot.webhooks.auth import bearer_of, signed_by_any, token_matches
from bot.webhooks.ports import DeployIntake
from bot.webhooks.refusals import Unproven

log = logging.getLogger(__name__)

GITHUB_PATH, DEPLOYS_PATH = "/webhooks/github", "/webhooks/deploys"
MAX_BODY = SERVER_MAX_BODY  # GitHub caps its payloads at 25 MB, but a deployment event is a few KB
DEPLOY_EVENTS = ("deployment_status", "deployment")
Answer = tuple[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Delivery:
    text: str  # the events, in the feed's format
    id: str = ""  # the sender's delivery id (idempotency key), when it gives one


class Refused(Exception):
    """A delivery answered with an error: `status`, and the reason, which is also recorded."""

    def __init__(self, status: str, why: str) -> None:
        super().__init__(why)
        self.status = status


class DeployWebhook:
    """The WSGI app of one endpoint; `authenticate` raises Refused, `read` gives the Delivery or an answer.

    A refusal before the sender is proven (too large to check, unsigned, wrongly signed) goes to
    `unproven`, in memory; one after it (a bad body) is recorded by the intake, where lag reads it."""

    def __init__(
        self,
        endpoint: str,
        intake: DeployIntake,
        authenticate: Callable[[bytes, Mapping[str, Any]], None],
        read: Callable[[bytes, Mapping[str, Any]], Delivery | Answer],
        unproven: Unproven,
        metrics: Metrics | None = None,
    ) -> None:
        self._endpoint, self._intake, self._metrics = endpoint, intake, metrics
        self._authenticate, self._read = authenticate, read
        self.source, self._unproven = intake.open(endpoint), unproven  # the push source it stores into

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            raw = self._proven_body(environ)
        except Refused as refused:
            if not refused.status.startswith("405"):
                log.warning("%s delivery refused before it proved its sender: %s", self._endpoint, refused)
                self._unproven.note(self.source, refused.status, str(refused))
                if self._metrics is not None:
                    self._metrics.webhook_refusals.labels(self.source, refused.status.split()[0]).inc()
            return json_response(start_response, refused.status, {"error": str(refused)})
        try:
            status, body = self._handle(raw, environ)
        except Refused as refused:
            status, body = refused.status, {"error": str(refused)}
            log.warning("%s delivery refused: %s", self._endpoint, refused)
            self._intake.refuse(self._endpoint, f"{status.split()[0]} {refused}")
        return json_response(start_response, status, body)

    def _proven_body(self, environ: dict[str, Any]) -> bytes:
        if environ.get("REQUEST_METHOD") != "POST":
            raise Refused("405 Method Not Allowed", "POST deploy events here")
        raw = read_body(environ)
        self._authenticate(raw, environ)
        return raw

    def _handle(self, raw: bytes, environ: dict[str, Any]) -> Answer:
        delivery = self._read(raw, environ)
        if not isinstance(delivery, Delivery):
            return delivery  # answered without storing anything (a ping, an event we do not take)
        try:
            result = self._intake.accept(self._endpoint, delivery.text, delivery=delivery.id)
        except Exception:
            log.exception("storing a %s delivery failed", self._endpoint)
            return "503 Service Unavailable", {"error": "the deploy could not be stored; retry later"}
        if result.errors:
            return "400 Bad Request", {"error": result.errors[0], "errors": list(result.errors)}
        status = "accepted" if result.stored else ("repeated" if result.repeated else "ignored")
        body = {"status": status, "stored": list(result.stored), "repeated": list(result.repeated)}
        return "202 Accepted", {**body, "warnings": list(result.warnings)} if result.warnings else body


def read_body(environ: Mapping[str, Any]) -> bytes:
    """The raw body, exactly as sent (signatures are over these bytes); Refused 413 over MAX_BODY."""
    raw = read_capped(environ, MAX_BODY)
    if raw is None:
        raise Refused("413 Content Too Large", f"body is over {MAX_BODY} bytes")
    return raw


def _utf8(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused("400 Bad Request", f"body is not UTF-8 (byte {exc.start})") from None


def github_auth(secrets: Sequence[str]) -> Callable[[bytes, Mapping[str, Any]], None]:
    def authenticate(raw: bytes, environ: Mapping[str, Any]) -> None:
        header = environ.get("HTTP_X_HUB_SIGNATURE_256")
        if not header:
            raise Refused("401 Unauthorized", "missing X-Hub-Signature-256")
        if not signed_by_any(raw, header, secrets):
            raise Refused("401 Unauthorized", "X-Hub-Signature-256 matches none of GITHUB_WEBHOOK_SECRETS")

    return authenticate


def read_github(raw: bytes, environ: Mapping[str, Any]) -> Delivery | Answer:
    event = str(environ.get("HTTP_X_GITHUB_EVENT") or "").strip()
    delivery = str(environ.get("HTTP_X_GITHUB_DELIVERY") or "").strip()
    if not event:
        raise Refused("400 Bad Request", "header X-GitHub-Event is missing")
    if event == "ping":
        return "200 OK", {"status": "pong", "events": list(DEPLOY_EVENTS)}
    if event not in DEPLOY_EVENTS:
        return "202 Accepted", {"status": "ignored", "event": event[:100]}
    text = _utf8(raw)
    if "x-www-form-urlencoded" in str(environ.get("CONTENT_TYPE", "")):
        text = parse_qs(text).get("payload", [""])[0]  # the webhook's other content type
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        raise Refused("400 Bad Request", f"body is not a JSON {event} event") from None
    if not isinstance(payload, dict) or not isinstance(payload.get(event), dict):
        raise Refused("400 Bad Request", f"field {event}: missing or not an object")
    return Delivery(text, delivery)


def native_auth(secrets: Sequence[str], tokens: Sequence[str]) -> Callable[[bytes, Mapping[str, Any]], None]:
    def authenticate(raw: bytes, environ: Mapping[str, Any]) -> None:
        signature = environ.get("HTTP_X_SIGNATURE_256")
        token = bearer_of(environ.get("HTTP_AUTHORIZATION"))
        if signature and signed_by_any(raw, signature, secrets):
            return
        if token and token_matches(token, tokens):
            return
        if signature:
            raise Refused("401 Unauthorized", "X-Signature-256 matches none of ONCALL_GRAPH_DEPLOY_WEBHOOK_SECRETS")
        if token:
            raise Refused("401 Unauthorized", "bearer token matches none of ONCALL_GRAPH_DEPLOY_WEBHOOK_TOKENS")
        raise Refused("401 Unauthorized", "missing X-Signature-256 or Authorization: Bearer")

    return authenticate


def read_native(raw: bytes, environ: Mapping[str, Any]) -> Delivery | Answer:
    text = _utf8(raw)
    if not text.strip():
        raise Refused("400 Bad Request", "empty body: send one deploy event, a JSON array or JSON Lines")
    return Delivery(text)  # idempotent by each event's own id


def build_deploy_webhooks(
    settings: Settings, intake: DeployIntake, unproven: Unproven, metrics: Metrics | None = None
) -> dict[str, WsgiApp]:
    """Path -> app for each endpoint whose secret (or token) is set; none when all are unset."""
    apps: dict[str, WsgiApp] = {}
    github = split_list(settings.github_webhook_secrets)
    if github:
        hook = DeployWebhook("github", intake, github_auth(github), read_github, unproven, metrics)
        log.info("GitHub deploy webhooks at %s into source %s (%d secrets)", GITHUB_PATH, hook.source, len(github))
        apps[GITHUB_PATH] = hook
    secrets, tokens = split_list(settings.deploy_webhook_secrets), split_list(settings.deploy_webhook_tokens)
    if secrets or tokens:
        hook = DeployWebhook("deploys", intake, native_auth(secrets, tokens), read_native, unproven, metrics)
        log.info("native deploy webhooks at %s into source %s", DEPLOYS_PATH, hook.source)
        apps[DEPLOYS_PATH] = hook
    return apps

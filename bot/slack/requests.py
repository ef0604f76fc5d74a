"""The boundary in front of Bolt on /slack/events: every request is size-capped, then its Slack
signature checked over the raw bytes (401 before any parsing), then its shape checked as Bolt and
our handlers will read it. Only a request that passes reaches Bolt, with the very bytes it sent.

Bolt parses before it verifies and lets a malformed body or event raise (HTTP 500 and a traceback,
or a 3 s ack and then nothing), so nothing malformed may reach it: a signed body that is not form
data or JSON, invalid UTF-8, an event that is not an object, a button payload with no actions. A
slash command missing a field its answer needs gets an ephemeral reply the user sees (the ack's own
body), never silence.

JSON nested deeper than any Slack payload, or a container with more members than Slack ever sends
(an alert with 5,000 attachments), is read within bounds (`bot/bounded_json`): what is too deep or
too many is left out, and the rest reaches Bolt, signed again by this boundary, so the alert is
answered from what can be read. A signed body is read whole up to SLACK_MAX_BODY, larger than any
message Slack sends; past it the body cannot be verified, and gets a 413.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from bot.bounded_json import loads_bounded
from bot.http import SLACK_MAX_BODY, StartResponse, WsgiApp, json_response, read_capped
from bot.telemetry.tracing import request_span, stage_span

log = logging.getLogger(__name__)

MAX_SKEW = 300  # seconds: Slack's own rule for a replayed request
MAX_FIELDS = 200  # a slash command has about a dozen form fields
COMMAND_NEEDS = ("command", "user_id", "channel_id", "response_url")
EVENT_TEXTS = ("type", "channel", "user", "text", "ts", "thread_ts", "subtype", "bot_id", "username", "app_id")


class Malformed(Exception):
    """A signed request we cannot read; the message names the field, and is what the sender sees."""


def signed(raw: bytes, timestamp: str, signature: str, secret: str, *, now: float) -> bool:
    """Slack's v0 signature over the raw bytes (slack_sdk's verifier decodes them as UTF-8 first,
    and raises on a body that is not), with a timestamp no more than MAX_SKEW from `now`."""
    # isascii first: `²` (a latin-1 header byte) is a digit to isdigit() and not to int().
    if not (timestamp.isascii() and timestamp.isdigit()) or not signature.isascii():
        return False
    if abs(now - int(timestamp)) > MAX_SKEW:
        return False
    return hmac.compare_digest(signature_of(raw, timestamp, secret).encode(), signature.encode())


def signature_of(raw: bytes, timestamp: str, secret: str) -> str:
    digest = hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    return f"v0={digest}"


@dataclass
class Loaded:
    """JSON read within bounds; `cut`: something too deep or too many was left out."""

    value: Any
    text: str
    cut: bool


def load_json(text: str, where: str) -> Loaded:
    try:
        value, cut = loads_bounded(text)
    except ValueError:
        raise Malformed(f"{where}: not valid JSON") from None
    return Loaded(value, json.dumps(value) if cut else text, cut)


def _object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise Malformed(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _texts(parent: Mapping[str, Any], keys: Iterable[str], where: str) -> None:
    for key in keys:
        if key in parent and parent[key] is not None and not isinstance(parent[key], str):
            raise Malformed(f"{where}.{key}: expected a string, got {type(parent[key]).__name__}")


def check_envelope(document: object) -> None:
    """An Events API body: url_verification with its challenge, or an event callback whose event is
    an object with string fields where our handlers read strings."""
    body = _object(document, "body")
    _texts(body, ("type", "event_id", "team_id", "api_app_id", "challenge"), "body")
    kind = body.get("type")
    if not kind:
        raise Malformed("body.type: missing")
    if kind == "url_verification" and not body.get("challenge"):
        raise Malformed("body.challenge: missing")
    if kind == "event_callback":
        event = _object(body.get("event"), "body.event")
        _texts(event, EVENT_TEXTS, "body.event")
        if not event.get("type"):
            raise Malformed("body.event.type: missing")
        check_event(event)


def check_event(event: Mapping[str, Any]) -> None:
    """The fields the assistant pane, unfurls and App Home read, of the events that carry them."""
    kind = event.get("type")
    if kind in ("assistant_thread_started", "assistant_thread_context_changed"):
        thread = _object(event.get("assistant_thread"), "body.event.assistant_thread")
        _texts(thread, ("user_id", "channel_id", "thread_ts"), "body.event.assistant_thread")
        for key in ("channel_id", "thread_ts"):
            if not thread.get(key):
                raise Malformed(f"body.event.assistant_thread.{key}: missing")
        if thread.get("context") is not None:
            context = _object(thread["context"], "body.event.assistant_thread.context")
            _texts(context, ("channel_id", "team_id", "enterprise_id"), "body.event.assistant_thread.context")
    elif kind == "link_shared":
        _texts(event, ("message_ts", "unfurl_id", "source"), "body.event")
        links = event.get("links")
        if not isinstance(links, list):
            raise Malformed("body.event.links: expected a list of links")
        for number, link in enumerate(links):
            _texts(_object(link, f"body.event.links[{number}]"), ("url", "domain"), f"body.event.links[{number}]")
    elif kind == "app_home_opened":
        _texts(event, ("tab",), "body.event")


def check_interaction(document: object) -> None:
    """An interactivity `payload`: a type, who clicked, and for buttons a non-empty list of actions."""
    payload = _object(document, "payload")
    _texts(payload, ("type", "response_url", "trigger_id", "api_app_id"), "payload")
    if not payload.get("type"):
        raise Malformed("payload.type: missing")
    for key in ("user", "channel", "team", "container", "message"):
        if payload.get(key) is not None:
            _texts(_object(payload[key], f"payload.{key}"), ("id", "name", "ts"), f"payload.{key}")
    if payload["type"] == "message_action":
        _texts(payload, ("callback_id",), "payload")
        _texts(_object(payload.get("message"), "payload.message"), ("text", "thread_ts"), "payload.message")
    if payload["type"] != "block_actions":
        return
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions:
        raise Malformed("payload.actions: expected a non-empty list of actions")
    for number, action in enumerate(actions):
        where = f"payload.actions[{number}]"
        _texts(_object(action, where), ("action_id", "block_id", "value", "type"), where)
        if not action.get("action_id"):
            raise Malformed(f"{where}.action_id: missing")
    if not payload.get("response_url"):
        raise Malformed("payload.response_url: missing, so no answer could reach the user")


def check_command(form: Mapping[str, str]) -> None:
    missing = [key for key in COMMAND_NEEDS if not form.get(key)]
    if missing:
        raise Malformed(f"the slash command arrived without {', '.join(missing)}")


def check_body(text: str, content_type: str) -> tuple[str, str]:
    """Raises Malformed; returns what the body is ("event", "interaction", "command", "other") and
    the body to pass on: `text` itself, or, when JSON in it was read within bounds, what was kept."""
    # Bolt's own rule for which parser a body gets: JSON by this exact type or a leading brace.
    if content_type == "application/json" or text.startswith("{"):
        body = load_json(text, "body")
        check_envelope(body.value)
        return "event", body.text
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text), max_num_fields=MAX_FIELDS)
    except ValueError:
        raise Malformed("body: neither JSON nor form data") from None
    form = dict(pairs)
    if "payload" in text:  # Bolt's test, kept: it then reads the payload field or nothing
        if "payload" not in form:
            raise Malformed("body: form data without a payload field")
        payload = load_json(form["payload"], "payload")
        check_interaction(payload.value)
        if not payload.cut:
            return "interaction", text
        return "interaction", urlencode([(k, payload.text if k == "payload" else v) for k, v in pairs])
    if "command" in form or "response_url" in form:
        check_command(form)
        return "command", text
    if form.get("ssl_check"):
        return "other", text
    raise Malformed("body: not a Slack event, command or interaction")


def guarded(bolt: WsgiApp, signing_secret: str) -> WsgiApp:
    """`bolt` behind the cap, the signature and the shape checks."""

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        with request_span("slack"):  # the answer's spans too: Bolt's listeners carry its context
            return checked(environ, start_response)

    def checked(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST":
            return json_response(start_response, "405 Method Not Allowed", {"error": "POST Slack requests here"})
        with stage_span("signature"):
            raw = read_capped(environ, SLACK_MAX_BODY)
            if raw is None:
                too_large = {"error": f"body over {SLACK_MAX_BODY} bytes"}
                return json_response(start_response, "413 Content Too Large", too_large)
            timestamp = str(environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP") or "")
            signature = str(environ.get("HTTP_X_SLACK_SIGNATURE") or "")
            if not signed(raw, timestamp, signature, signing_secret, now=time.time()):
                log.warning("Slack request refused: missing, stale or wrong X-Slack-Signature (%d bytes)", len(raw))
                return json_response(start_response, "401 Unauthorized", {"error": "invalid request signature"})
            try:
                text = raw.decode("utf-8")
                kind, passed = check_body(text, str(environ.get("CONTENT_TYPE") or ""))
            except UnicodeDecodeError as exc:
                return _refuse(start_response, f"body is not UTF-8 (byte {exc.start})")
            except Malformed as exc:
                if "slash command" in str(exc):
                    return _tell_user(start_response, str(exc))
                return _refuse(start_response, str(exc))
            if passed != text:
                log.warning("Slack %s request read within bounds: JSON too deep or too many members left out", kind)
                raw = passed.encode("utf-8")
                environ["HTTP_X_SLACK_SIGNATURE"] = signature_of(raw, timestamp, signing_secret)  # what Bolt checks
            environ["wsgi.input"] = io.BytesIO(raw)
            environ["CONTENT_LENGTH"] = str(len(raw))
        log.debug("Slack %s request passed the boundary", kind)
        return bolt(environ, start_response)

    return app


def _refuse(start_response: StartResponse, why: str) -> list[bytes]:
    log.warning("Slack request refused: %s", why)
    return json_response(start_response, "400 Bad Request", {"error": why})


def _tell_user(start_response: StartResponse, why: str) -> list[bytes]:
    """A slash command's ack body is shown to the user who typed it: say what went wrong there."""
    log.warning("Slack request refused: %s", why)
    reply = {"response_type": "ephemeral", "text": f"Sorry — oncall-graph could not read this command: {why}."}
    return json_response(start_response, "200 OK", reply)

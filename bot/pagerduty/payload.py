"""PagerDuty v3 webhook payloads: `{"event": {"id", "event_type", "data", ...}}`, one event each.

Only `incident.triggered` is read in full (its `data` is the incident); every other event type is
returned with its type alone, to be acknowledged and ignored. Pure: the body is never mutated,
and a bad body raises `WebhookPayloadError` naming the field and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from bot.bounded_json import loads_bounded
from bot.query.durations import parse_instant

TRIGGERED = "incident.triggered"


class WebhookPayloadError(ValueError):
    """The body is not a v3 webhook event we can read; the message names the field."""


@dataclass(frozen=True, slots=True)
class Incident:
    """A triggered incident, as `event.data` describes it; optional fields are `""` when absent."""

    id: str
    title: str
    urgency: str
    html_url: str
    service_id: str
    service_name: str
    created_at: datetime | None = None  # when the incident began: a suspects window ends here, not on arrival


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    id: str
    event_type: str
    incident: Incident | None  # set for incident.triggered only


def parse_webhook(body: bytes) -> WebhookEvent:
    """The event a webhook body carries; raises WebhookPayloadError on anything else."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WebhookPayloadError(f"body is not UTF-8 (byte {exc.start})") from exc
    try:
        document, _cut = loads_bounded(text)  # what nests too deep or too wide is left out, the rest read
    except json.JSONDecodeError as exc:
        raise WebhookPayloadError(f"body is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except ValueError:
        raise WebhookPayloadError("body is not JSON we read: nested too deep") from None
    event = _object(document, "event", "") if isinstance(document, Mapping) else None
    if event is None:
        raise WebhookPayloadError('body: expected a JSON object with an "event" object')
    event_type = _text(event, "event_type", "event")
    if not event_type:
        raise WebhookPayloadError("event.event_type: expected a non-empty string")
    incident = parse_incident(event.get("data")) if event_type == TRIGGERED else None
    return WebhookEvent(id=_text(event, "id", "event"), event_type=event_type, incident=incident)


def parse_incident(data: object) -> Incident:
    """`event.data` of an incident event: its id and service are required, the rest optional."""
    if not isinstance(data, Mapping):
        raise WebhookPayloadError("event.data: expected the incident object")
    incident_id = _text(data, "id", "event.data")
    if not incident_id:
        raise WebhookPayloadError("event.data.id: expected the incident id")
    service = _object(data, "service", "event.data")
    if service is None:
        raise WebhookPayloadError("event.data.service: expected an object with id and summary")
    service_id = _text(service, "id", "event.data.service")
    service_name = _text(service, "summary", "event.data.service")
    if not service_id and not service_name:
        raise WebhookPayloadError("event.data.service: expected an id or a summary")
    return Incident(
        id=incident_id,
        title=_text(data, "title", "event.data"),
        urgency=_text(data, "urgency", "event.data").lower(),
        html_url=_text(data, "html_url", "event.data"),
        service_id=service_id,
        service_name=service_name,
        created_at=_instant(data, "created_at", "event.data"),
    )


def _instant(parent: Mapping[str, object], key: str, where: str) -> datetime | None:
    text = _text(parent, key, where)
    if not text:
        return None
    try:
        return parse_instant(text)
    except ValueError as exc:
        raise WebhookPayloadError(f"{_field(where, key)}: {exc}") from None


def _object(parent: Mapping[str, object], key: str, where: str) -> Mapping[str, object] | None:
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise WebhookPayloadError(f"{_field(where, key)}: expected an object, got {type(value).__name__}")
    return value


def _text(parent: Mapping[str, object], key: str, where: str) -> str:
    value = parent.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WebhookPayloadError(f"{_field(where, key)}: expected a string, got {type(value).__name__}")
    return value.strip()


def _field(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key

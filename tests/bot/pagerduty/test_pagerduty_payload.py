"""PagerDuty v3 webhook bodies: a triggered incident read in full, other events by type only,
and a clear error naming the field for anything else."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.pagerduty.payload import Incident, WebhookPayloadError, parse_webhook


def triggered(**data: Any) -> dict[str, Any]:
    """The incident.triggered example of PagerDuty's webhook docs (trimmed)."""
    incident = {
        "id": "PGR0VU2", "type": "incident", "self": "https://api.pagerduty.com/incidents/PGR0VU2",
        "html_url": "https://acme.pagerduty.com/incidents/PGR0VU2", "number": 2, "status": "triggered",
        "incident_key": "d3640fbd41094207a1c11e58e46b1662", "created_at": "2020-04-09T15:16:27Z",
        "title": "A little bump in the road",
        "service": {"html_url": "https://acme.pagerduty.com/services/PF9KMXH", "id": "PF9KMXH",
                    "self": "https://api.pagerduty.com/services/PF9KMXH", "summary": "API Service",
                    "type": "service_reference"},
        "urgency": "high", "priority": None, "resolve_reason": None,
        **data,
    }  # fmt: skip
    return {
        "event": {
            "id": "5ac64822-4adc-4fda-ade0-410becf0de4f", "event_type": "incident.triggered",
            "resource_type": "incident", "occurred_at": "2020-10-02T18:45:22.169Z", "agent": None,
            "client": None, "data": incident,
        }
    }  # fmt: skip


def body(document: object) -> bytes:
    return json.dumps(document).encode()


def test_a_triggered_incident_is_read_with_its_service() -> None:
    event = parse_webhook(body(triggered()))
    assert event.event_type == "incident.triggered" and event.id == "5ac64822-4adc-4fda-ade0-410becf0de4f"
    assert event.incident == Incident(
        id="PGR0VU2",
        title="A little bump in the road",
        urgency="high",
        html_url="https://acme.pagerduty.com/incidents/PGR0VU2",
        service_id="PF9KMXH",
        service_name="API Service",
        created_at=datetime(2020, 4, 9, 15, 16, 27, tzinfo=UTC),
    )


def test_other_event_types_carry_no_incident_and_need_no_incident_fields() -> None:
    for event_type in ("incident.acknowledged", "incident.resolved", "pagey.ping", "service.updated"):
        event = parse_webhook(body({"event": {"event_type": event_type, "data": {"message": "Hello"}}}))
        assert event.event_type == event_type and event.incident is None


def test_unicode_titles_and_service_names_are_kept() -> None:
    document = triggered(title="Paiements : taux d’erreur élevé ⚠", service={"id": "P1", "summary": "Zahlungsdienst"})
    incident = parse_webhook(json.dumps(document, ensure_ascii=False).encode("utf-8")).incident
    assert incident is not None and incident.title == "Paiements : taux d’erreur élevé ⚠"


def test_a_service_known_only_by_name_or_only_by_id_is_enough() -> None:
    only_name = parse_webhook(body(triggered(service={"summary": "payments"}))).incident
    only_id = parse_webhook(body(triggered(service={"id": "PAYMNTS"}))).incident
    assert only_name is not None and (only_name.service_id, only_name.service_name) == ("", "payments")
    assert only_id is not None and (only_id.service_id, only_id.service_name) == ("PAYMNTS", "")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{not json", "body is not JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        (b"\xff\xfe", "body is not UTF-8"),
        (b"[]", 'expected a JSON object with an "event" object'),
        (b'{"messages": []}', 'expected a JSON object with an "event" object'),
        (b'{"event": []}', "event: expected an object, got list"),
        (b'{"event": {}}', "event.event_type: expected a non-empty string"),
        (b'{"event": {"event_type": 7}}', "event.event_type: expected a string, got int"),
        (b'{"event": {"event_type": "incident.triggered"}}', "event.data: expected the incident object"),
        (body(triggered(id="")), "event.data.id: expected the incident id"),
        (body(triggered(service=None)), "event.data.service: expected an object with id and summary"),
        (body(triggered(service="PF9KMXH")), "event.data.service: expected an object, got str"),
        (body(triggered(service={"type": "service_reference"})), "event.data.service: expected an id or a summary"),
        (body(triggered(title=["x"])), "event.data.title: expected a string, got list"),
    ],
)
def test_a_bad_body_is_refused_with_the_field_named(raw: bytes, message: str) -> None:
    with pytest.raises(WebhookPayloadError) as error:
        parse_webhook(raw)
    assert message in str(error.value)


def test_the_incident_start_is_read_and_a_bad_one_is_named() -> None:
    moved = parse_webhook(body(triggered(created_at="2026-11-29T14:30:00+01:00"))).incident
    assert moved is not None and moved.created_at == datetime(2026, 11, 29, 13, 30, tzinfo=UTC)
    absent = parse_webhook(body(triggered(created_at=None))).incident
    assert absent is not None and absent.created_at is None
    with pytest.raises(WebhookPayloadError, match=r"event\.data\.created_at: expected an ISO 8601 time"):
        parse_webhook(body(triggered(created_at="yesterday")))


def test_an_incident_with_parts_nested_too_deep_or_too_many_is_still_read() -> None:
    deep = '{"x":' * 5000 + "1" + "}" * 5000
    wide = json.dumps([{"id": f"T{i}", "type": "team_reference"} for i in range(5000)])
    raw = body(triggered(teams="TEAMS", priority="DEEP")).replace(b'"TEAMS"', wide.encode())
    event = parse_webhook(raw.replace(b'"DEEP"', deep.encode()))
    assert event.incident is not None and event.incident.service_id == "PF9KMXH"
    assert event.incident.title == "A little bump in the road"

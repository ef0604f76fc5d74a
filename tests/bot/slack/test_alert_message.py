from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.slack.alert_message import STATUSES, Alert, incident_key, is_alert, parse_alert

DATA = Path(__file__).resolve().parents[2] / "data" / "slack"
INCIDENT = "Q2KX7T8PLMN0AB"


def load(name: str) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((DATA / f"pagerduty_{name}.json").read_text(encoding="utf-8")))


def parsed(event: dict[str, Any]) -> Alert:
    alert = parse_alert(event)
    assert alert is not None
    return alert


def message(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"type": "message", "channel": "C0ALERTS1", "ts": "1764424800.000100"}
    return {**base, **fields}


# --- parse_alert on recorded-shape fixtures -------------------------------------------------------


def test_modern_card_with_blocks_in_attachments_yields_every_field() -> None:
    alert = parsed(load("triggered_card"))

    assert alert == Alert(
        incident_id=INCIDENT,
        incident_url=f"https://acme.pagerduty.com/incidents/{INCIDENT}",
        service_name="Shopping Cart",
        service_id="PCART01",
        title="Redis latency high on cart",
        urgency="high",
        status="triggered",
        channel="C0ALERTS1",
        ts="1764424800.000100",
        text_blob=alert.text_blob,
    )
    assert "View in PagerDuty" in alert.text_blob
    assert "Alice Ng" in alert.text_blob


def test_legacy_bot_message_is_read_from_attachment_title_link_and_fields() -> None:
    alert = parsed(load("legacy_bot_message"))

    assert (alert.incident_id, alert.incident_url) == (
        "Q0REDIS4610XY",
        "https://acme.pagerduty.com/incidents/Q0REDIS4610XY",
    )
    assert (alert.service_name, alert.service_id) == ("Redis", "PREDIS1")
    assert alert.title == "Disk almost full on redis-primary-1"
    assert (alert.urgency, alert.status) == ("low", "triggered")


@pytest.mark.parametrize(("name", "status"), [("acknowledged_card", "acknowledged"), ("resolved_card", "resolved")])
def test_status_updates_share_the_incident_key_of_the_trigger(name: str, status: str) -> None:
    trigger = parsed(load("triggered_card"))
    update = parsed(load(name))

    assert update.status == status
    assert update.ts != trigger.ts
    assert incident_key(update) == incident_key(trigger) == INCIDENT
    assert (update.service_id, update.title) == (trigger.service_id, trigger.title)


def test_blocks_only_message_with_empty_text_is_parsed_with_unknown_status() -> None:
    event = load("blocks_only")
    assert event["text"] == ""

    alert = parsed(event)

    assert alert.incident_id == "Q3PAYAPI77"
    assert alert.incident_url == "https://acme.eu.pagerduty.com/incidents/Q3PAYAPI77"
    assert alert.title == "Payment authorisations failing"
    assert (alert.service_name, alert.service_id) == ("payments-api", "")
    assert (alert.urgency, alert.status) == ("high", "")


def test_parsing_never_mutates_the_event() -> None:
    event = load("triggered_card")
    before = copy.deepcopy(event)

    parse_alert(event)

    assert event == before


# --- parse_alert on small hand-built shapes --------------------------------------------------------


@pytest.mark.parametrize(
    ("colour", "status"),
    [("danger", "triggered"), ("#A30200", "triggered"), ("warning", "acknowledged"), ("f2c744", "acknowledged")]
    + [("good", "resolved"), ("2eb67d", "resolved"), ("#888888", ""), ("#2b6cb0", ""), ("not-a-colour", "")],
)
def test_colour_gives_the_status_only_when_no_words_do(colour: str, status: str) -> None:
    event = message(text="", attachments=[{"color": colour, "title": "Disk almost full on redis-primary-1"}])

    assert parsed(event).status == status


def test_status_word_inside_an_incident_title_is_not_taken_as_the_status() -> None:
    event = message(attachments=[{"color": "danger", "title": "DNS for api.acme.io not resolved"}])

    alert = parsed(event)

    assert (alert.status, alert.title) == ("triggered", "DNS for api.acme.io not resolved")


def test_triggered_via_source_link_does_not_mark_an_acknowledged_card_triggered() -> None:
    context = {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": "Triggered via <https://dd.example|Datadog>"}],
    }
    acked = {"type": "context", "elements": [{"type": "mrkdwn", "text": "Acknowledged by <@U0ALICE01>"}]}
    event = message(text="", blocks=[context, acked])

    assert parsed(event).status == "acknowledged"


def test_status_field_is_read_when_there_is_no_header() -> None:
    event = message(attachments=[{"title": "Queue backlog", "fields": [{"title": "Status", "value": "Resolved"}]}])

    assert parsed(event).status == "resolved"


def test_bold_label_line_and_free_text_urgency_are_read() -> None:
    event = message(text="*Impacted service*\ntoken cache\nThis is a low-urgency incident")

    alert = parsed(event)

    assert (alert.service_name, alert.urgency) == ("token cache", "low")


def test_service_link_label_names_the_service_when_no_field_does() -> None:
    event = message(text="Disk full on <https://acme.pagerduty.com/service-directory/PREDIS1|Redis>")

    alert = parsed(event)

    assert (alert.service_name, alert.service_id) == ("Redis", "PREDIS1")


def test_a_link_labelled_view_in_pagerduty_is_not_taken_for_the_title() -> None:
    link = f"<https://acme.pagerduty.com/incidents/{INCIDENT}|View in PagerDuty>"
    event = message(text=link, attachments=[{"fallback": "Triggered: Disk full on redis-primary-1"}])

    assert parsed(event).title == "Disk full on redis-primary-1"


@pytest.mark.parametrize(
    "url",
    [
        "https://acme.pagerduty.com/incidents/Q1ABCdef",
        "https://acme.pagerduty.com.evil.example/incidents/Q1ABC",
        "https://pagerduty.example.com/incidents/Q1ABC",
    ],
)
def test_incident_id_is_never_half_read_or_taken_from_another_host(url: str) -> None:
    alert = parsed(message(text=f"see {url}"))

    assert (alert.incident_id, alert.incident_url) == ("", "")


def test_a_message_with_no_readable_text_is_none() -> None:
    assert parse_alert(message(text=" ", attachments=[{"color": "danger"}], blocks=[{"type": "divider"}])) is None


def test_a_text_only_alert_without_incident_keys_on_channel_and_ts() -> None:
    alert = parsed(message(text=":rotating_light: Triggered: checkout error rate above 5%"))

    assert (alert.title, alert.status) == ("checkout error rate above 5%", "triggered")
    assert incident_key(alert) == "C0ALERTS1:1764424800.000100"


def test_deeply_nested_blocks_do_not_exhaust_the_stack() -> None:
    node: Any = {"type": "text", "text": "https://acme.pagerduty.com/incidents/QDEEP1"}
    for _ in range(5000):
        node = {"elements": [node]}

    alert = parse_alert(message(text="deep", blocks=[node]))

    assert alert is not None
    assert alert.incident_id == ""


# --- is_alert --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["triggered_card", "acknowledged_card", "resolved_card", "legacy_bot_message"])
def test_default_allowlist_matches_the_pagerduty_app_by_profile_name_or_username(name: str) -> None:
    assert is_alert(load(name))


@pytest.mark.parametrize("name", ["other_bot", "thread_reply", "message_changed"])
def test_other_bots_thread_replies_and_edits_are_not_alerts(name: str) -> None:
    assert not is_alert(load(name))


@pytest.mark.parametrize("subtype", ["message_changed", "message_deleted", "thread_broadcast", "channel_join"])
def test_only_plain_and_bot_message_subtypes_are_alerts(subtype: str) -> None:
    assert not is_alert({**load("triggered_card"), "subtype": subtype})


def test_thread_ts_equal_to_ts_is_still_a_top_level_message() -> None:
    event = load("triggered_card")

    assert is_alert({**event, "thread_ts": event["ts"]})
    assert not is_alert({**event, "thread_ts": "1764424700.000001"})


@pytest.mark.parametrize("bots", [("B0PD12345",), ("a0pdapp01",), ("pagerduty",), ("  PAGERDUTY ", "B0OTHER")])
def test_allowlist_matches_bot_id_app_id_or_name_case_insensitively(bots: tuple[str, ...]) -> None:
    assert is_alert(load("triggered_card"), alert_bots=bots)


def test_legacy_bot_is_matched_by_its_bot_id() -> None:
    assert is_alert(load("legacy_bot_message"), alert_bots=["B0LEGACY1"])
    assert not is_alert(load("legacy_bot_message"), alert_bots=["B0PD12345"])


def test_an_allowlist_given_as_one_string_is_read_as_comma_separated_names() -> None:
    assert is_alert(load("triggered_card"), alert_bots="Opsgenie, pagerduty")
    assert not is_alert(load("triggered_card"), alert_bots="Pager")


def test_an_empty_allowlist_matches_nothing() -> None:
    assert not is_alert(load("triggered_card"), alert_bots=())


def test_a_message_without_ts_cannot_be_replied_to_and_is_not_an_alert() -> None:
    event = load("triggered_card")
    del event["ts"]

    assert not is_alert(event)


def test_an_allowed_bot_posting_a_non_message_event_is_not_an_alert() -> None:
    assert not is_alert({**load("triggered_card"), "type": "app_mention"})


# --- never raise -----------------------------------------------------------------------------------

KEYS = st.sampled_from(
    ["type", "subtype", "text", "ts", "thread_ts", "channel", "bot_id", "app_id", "username", "bot_profile"]
    + ["name", "attachments", "blocks", "fields", "elements", "title", "title_link", "value", "url", "color"]
    + ["pretext", "fallback"]
) | st.text(max_size=6)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.sampled_from(["header", "context", "message", "bot_message", "PagerDuty", "ff0000", "#fff", "1.5"])
    | st.sampled_from(["*Service:*\n", "*Urgency*", "Status: Resolved", "<https://a.pagerduty.com/services/P1|x>"])
    | st.sampled_from(["https://a.eu.pagerduty.com/incidents/Q1", "<https://a.pagerduty.com/incidents/Q2|#1>"])
)
JSON = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5))


@given(st.dictionaries(KEYS, JSON, max_size=8))
def test_any_json_shaped_event_parses_without_raising(event: dict[str, Any]) -> None:
    before = copy.deepcopy(event)

    alert = parse_alert(event)
    decision = is_alert(event)

    assert isinstance(decision, bool)
    assert event == before
    if alert is not None:
        assert alert.status in (*STATUSES, "")
        assert alert.urgency in ("high", "low", "")
        assert incident_key(alert)


@given(JSON)
def test_a_non_mapping_event_is_neither_parsed_nor_an_alert(value: object) -> None:
    if isinstance(value, dict):
        return
    assert parse_alert(cast(Any, value)) is None
    assert not is_alert(cast(Any, value))


@given(st.sampled_from(["triggered_card", "legacy_bot_message", "blocks_only"]), st.data())
def test_fixtures_with_any_subtree_replaced_still_parse(name: str, data: st.DataObject) -> None:
    event = load(name)
    node: Any = event
    while isinstance(node, dict | list) and node:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        key = data.draw(st.sampled_from(keys))
        if data.draw(st.booleans()):
            node[key] = data.draw(JSON)
            break
        node = node[key]

    parse_alert(event)
    is_alert(event)

"""Requests someone waits on that cannot be read whole, signed, against the running bot: an alert
whose blocks nest 5,000 deep, one with 5,000 attachments, one with nothing readable, a PagerDuty
webhook nested 5,000 deep, and buttons whose values are not what the bot wrote. Each gets an answer:
from what can be read, or a short one saying what could not be read; never silence, never a 4xx."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.e2e.conftest import ALERTS, Bot
from tests.e2e.test_alert_redaction import alert_card
from tests.e2e.test_pagerduty_webhook import PD_SECRET, incident_event, raw
from tests.e2e.test_slack_bot import only_response, text_of
from tests.fakes.slack_api import FakeSlack

DEEP = 5000


def envelope(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    return {"token": "x", "team_id": "T1", "api_app_id": "AOG", "type": "event_callback", "event_id": event_id,
            "event_time": int(time.time()), "event": event}  # fmt: skip


def nested(marker: str) -> str:
    """Context blocks each inside the last, DEEP of them, around one text at the bottom."""
    return '{"type":"context","elements":[' * DEEP + json.dumps(marker) + "]}" * DEEP


def reply_in_thread(fake: FakeSlack, ts: str) -> dict[str, Any]:
    fake.wait_for(lambda: [p for p in fake.posted("chat.postMessage") if p.get("thread_ts") == ts], timeout=30)
    [reply] = [p for p in fake.posted("chat.postMessage") if p.get("thread_ts") == ts]
    return reply


def test_alerts_too_deep_or_too_wide_to_read_whole_are_answered_from_what_can_be_read(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    deep = alert_card("1700000200.000001", "Disk full on the ledger", "payments")
    deep["blocks"] = ["NESTED"]
    body = json.dumps(envelope(deep, "EvDeep")).replace('"NESTED"', nested("buried"))
    assert bot.post(body, "application/json").status_code == 200
    wide = alert_card("1700000200.000002", "Error rate above 5%", "payments")
    wide["attachments"] = wide["attachments"] * DEEP  # ~2 MB: more than any message Slack sends
    wide_body = json.dumps(envelope(wide, "EvWide"))
    assert len(wide_body) > 1_500_000
    assert bot.post(wide_body, "application/json").status_code == 200
    for ts in ("1700000200.000001", "1700000200.000002"):
        shown = text_of(reply_in_thread(fake_slack, ts))
        assert "Alert on payments" in shown and "Suspects" in shown, shown
    assert "Traceback" not in bot.output()


def test_an_alert_with_nothing_readable_gets_a_short_reply_saying_so(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    ts = "1700000300.000001"
    blank = {"type": "message", "channel": ALERTS, "ts": ts, "text": "", "bot_id": "BPAGERDUTY",
             "bot_profile": {"id": "BPAGERDUTY", "name": "PagerDuty"}, "blocks": ["NESTED"]}  # fmt: skip
    body = json.dumps(envelope(blank, "EvBlank")).replace('"NESTED"', nested("Service: payments"))
    assert bot.post(body, "application/json").status_code == 200
    assert "could not read this alert" in text_of(reply_in_thread(fake_slack, ts))


def test_a_pagerduty_webhook_nested_too_deep_still_posts_its_incident(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(PAGERDUTY_WEBHOOK_SECRETS=PD_SECRET, ONCALL_GRAPH_ALERT_CHANNEL="CINCIDENTS")
    event = incident_event("QDEEP1", "PPAY", "payments", title="Checkout failing")
    event["event"]["data"]["priority"] = "NESTED"
    body = raw(event).replace(b'"NESTED"', ('{"x":' * DEEP + "1" + "}" * DEEP).encode())
    assert bot.pagerduty(body, PD_SECRET).status_code == 202
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=30)
    [post] = fake_slack.posted("chat.postMessage")
    assert "Checkout failing" in text_of(post)


def test_buttons_whose_values_cannot_be_read_are_told_what_is_wrong(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    values = {
        "string": {"cmd": "blast-radius", "name": "redis", "depth": "abc"},
        "superscript": {"cmd": "blast-radius", "name": "redis", "depth": "\u00b2"},
        "list": {"cmd": "suspects", "name": "payments", "since": ["6h"]},
        "nameless": {"cmd": "blast-radius"},
    }
    for name, value in values.items():
        assert bot.action("share_answer", json.dumps(value), fake_slack.response_url(name)).status_code == 200
        reply = only_response(fake_slack, name)
        assert "could not read this button" in text_of(reply), (name, reply)
        assert reply.get("response_type") == "ephemeral" and reply.get("replace_original") is False
    assert bot.action("share_answer", json.dumps({"cmd": "blast-radius", "name": "redis", "depth": "2"}),
                      fake_slack.response_url("digits")).status_code == 200  # fmt: skip
    assert "Blast radius: redis" in text_of(only_response(fake_slack, "digits"))
    assert "Traceback" not in bot.output()

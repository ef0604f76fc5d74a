"""An alert's title or service naming a restricted entity, answered over real HTTP in a channel
that may not see it: neither the thread reply nor the webhook's post repeats the name."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from tests.e2e.conftest import ALERTS, Bot
from tests.e2e.test_pagerduty_webhook import PD_SECRET, incident_event, raw
from tests.e2e.test_slack_bot import text_of
from tests.fakes.slack_api import FakeSlack

Json = dict[str, Any]
HIDDEN_NAMES = ("vault-proxy", "vault proxy", "secops")


def alert_card(ts: str, title: str, service: str = "") -> Json:
    fields = [{"type": "mrkdwn", "text": "*Urgency:*\nHigh"}]
    if service:
        fields.insert(0, {"type": "mrkdwn", "text": f"*Service:*\n{service}"})
    card = {
        "color": "#a50000",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": "Triggered: P1 incident"}},
            {"type": "section", "text": {"type": "mrkdwn",
             "text": f"<https://acme.pagerduty.com/incidents/Q{ts[-4:]}X|{title}>"}},
            {"type": "section", "fields": fields},
        ],
    }  # fmt: skip
    return {
        "type": "message", "channel": ALERTS, "ts": ts, "text": "", "bot_id": "BPAGERDUTY",
        "bot_profile": {"id": "BPAGERDUTY", "name": "PagerDuty", "app_id": "APAGERDUTY"}, "attachments": [card],
    }  # fmt: skip


def leaked(message: Json) -> list[str]:
    shown = html.unescape(text_of(message)).casefold()
    return [name for name in HIDDEN_NAMES if name in shown]


def test_an_alert_title_naming_a_hidden_entity_is_not_echoed_in_the_thread_or_the_webhook_post(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(PAGERDUTY_WEBHOOK_SECRETS=PD_SECRET, ONCALL_GRAPH_ALERT_CHANNEL="COPSALERTS")
    cases = [
        ("1700000100.001001", "Vault Proxy: 5xx above 5%", ""),  # the title is all there is to resolve
        ("1700000100.001002", "vault-proxy token refresh failing", "Payments"),  # resolved by service
        ("1700000100.001003", "Errors rising", "vault-proxy"),  # a service the channel may not see
    ]
    for number, (ts, title, service) in enumerate(cases):
        bot.event(alert_card(ts, title, service), event_id=f"EvR{number}")
    fake_slack.wait_for(lambda: len(fake_slack.posted("chat.postMessage")) >= len(cases), timeout=30)
    replies = {post["thread_ts"]: post for post in fake_slack.posted("chat.postMessage")}
    assert set(replies) == {ts for ts, _, _ in cases}
    for ts, _, _ in cases:
        assert leaked(replies[ts]) == [], (ts, text_of(replies[ts]))
    assert "antifraud" in text_of(replies["1700000100.001002"])  # the answer itself still stands

    for number, (_, title, service) in enumerate(cases):
        body = raw(incident_event(f"Q9RED{number}", f"PX{number}", service or "Unknown", title=title))
        assert bot.pagerduty(body, PD_SECRET).status_code == 202
    fake_slack.wait_for(lambda: len(fake_slack.posted("chat.postMessage")) >= 2 * len(cases), timeout=30)
    posts = [p for p in fake_slack.posted("chat.postMessage") if p["channel"] == "COPSALERTS"]
    assert len(posts) == len(cases)
    for post in posts:
        assert leaked(post) == [], text_of(post)
        assert "PagerDuty incident" in text_of(post)
    assert any("Errors rising" in text_of(p) for p in posts)  # a title naming nothing hidden is kept
    assert "Traceback" not in bot.output()

"""Links whose label reads as another host, through the running bot over signed HTTP: a pushed deploy
whose id is a URL of one host and whose `url` goes to another, and a PagerDuty incident whose title
is a URL of another host than its own page. The label is shown as plain text and the link beside it
is labelled by the host it really goes to."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.bot.slack.test_blocks import texts
from tests.bot.slack.test_escaping import assert_no_raw_control
from tests.e2e.conftest import Bot
from tests.e2e.test_pagerduty_webhook import PD_SECRET, incident_event, raw
from tests.e2e.webhook_posts import DEPLOY_SECRET, native, recent
from tests.fakes.slack_api import FakeSlack

DISGUISE = "https://ci.example.com/r-9999"
PHISH = "https://evil.example/phish"


def mrkdwn(message: dict[str, Any]) -> list[str]:
    blocks = message.get("blocks") or []
    return [str(message.get("text") or "")] + [
        t for b in blocks for t in texts(b) if b.get("type") not in ("header", "actions")
    ]


def test_a_deploy_id_that_reads_as_another_url_is_shown_plain_beside_a_link_named_by_its_host(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(ONCALL_GRAPH_DEPLOY_WEBHOOK_SECRETS=DEPLOY_SECRET)
    event = {"id": DISGUISE, "service": "antifraud", "version": "v9.9.9", "url": PHISH, "deployed_at": recent(3)}
    assert native(bot, json.dumps(event).encode()).status_code == 202
    deadline = time.monotonic() + 30  # the pushed deploy reaches answers at the next snapshot
    while True:
        name = f"disguise-{time.monotonic_ns()}"
        bot.command("/suspects", "antifraud 6h", fake_slack.response_url(name))
        fake_slack.wait_for(lambda name=name: fake_slack.responses(name), timeout=20)
        [answer] = fake_slack.responses(name)
        if "v9.9.9" in json.dumps(answer):
            break
        assert time.monotonic() < deadline, "the pushed deploy never reached /suspects"
        time.sleep(0.3)
    shown = "\n".join(mrkdwn(answer))
    assert f"{DISGUISE} (<{PHISH}|evil.example>)" in shown, shown
    for piece in mrkdwn(answer):
        assert_no_raw_control(piece, {PHISH, "https://ci.example.com/r-8812"})


def test_an_incident_title_that_reads_as_another_url_never_labels_the_incident_link(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(PAGERDUTY_WEBHOOK_SECRETS=PD_SECRET, ONCALL_GRAPH_ALERT_CHANNEL="CINCIDENTS")
    event = incident_event("QDISGUISE", "PANTI", "antifraud", title="https://acme.pagerduty.com/incidents/QREAL")
    event["event"]["data"]["html_url"] = "https://pagerduty.evil.example/incidents/QDISGUISE"
    assert bot.pagerduty(raw(event), PD_SECRET).status_code == 202
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=20)
    [post] = fake_slack.posted("chat.postMessage")
    shown = "\n".join(mrkdwn(post))
    link = "<https://pagerduty.evil.example/incidents/QDISGUISE|pagerduty.evil.example>"
    assert f"https://acme.pagerduty.com/incidents/QREAL ({link})" in shown, shown
    for piece in mrkdwn(post):
        assert_no_raw_control(
            piece, {"https://pagerduty.evil.example/incidents/QDISGUISE", "https://ci.example.com/r-8812"}
        )
    assert "Traceback" not in bot.output()

"""PagerDuty v3 webhooks into the running bot over real HTTP, its posts out at a fake Slack API."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import ROOT, Bot, write_sources
from tests.e2e.test_slack_bot import text_of
from tests.fakes.slack_api import FakeSlack

Json = dict[str, Any]
PD_SECRET = "pd-secret-new"
OLD_SECRET = "pd-secret-old"
REFUNDS = """
---
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: refunds
  annotations:
    pagerduty.com/service-id: PREFUND
    slack.com/channel: CREFUNDS
spec: {type: service, lifecycle: production, owner: group:payments-team, dependsOn: ["component:payments"]}
"""


def incident_event(incident_id: str, service_id: str, service_name: str, *, title: str = "Error rate above 5%",
                   event_type: str = "incident.triggered") -> Json:  # fmt: skip
    """A v3 webhook body shaped like PagerDuty's documented example."""
    return {
        "event": {
            "id": f"ev-{incident_id}-{event_type}", "event_type": event_type, "resource_type": "incident",
            "occurred_at": "2026-11-30T02:00:00.000Z", "agent": None, "client": None,
            "data": {
                "id": incident_id, "type": "incident", "self": f"https://api.pagerduty.com/incidents/{incident_id}",
                "html_url": f"https://acme.pagerduty.com/incidents/{incident_id}", "number": 7,
                "status": event_type.removeprefix("incident."), "title": title, "urgency": "high",
                "service": {"id": service_id, "summary": service_name, "type": "service_reference",
                            "html_url": f"https://acme.pagerduty.com/services/{service_id}"},
                "teams": [], "priority": None, "resolve_reason": None,
            },
        }
    }  # fmt: skip


def raw(event: Json) -> bytes:
    return json.dumps(event, ensure_ascii=False).encode("utf-8")


def signature_of(body: bytes) -> str:
    return "v1=" + hmac.new(PD_SECRET.encode(), body, hashlib.sha256).hexdigest()


def outcomes(bot: Bot) -> dict[str, float]:
    text = httpx.get(f"{bot.url}/metrics", timeout=5).text
    found = re.findall(r'^oncall_graph_pagerduty_webhooks_total\{outcome="(\w+)"\} ([\d.]+)$', text, re.MULTILINE)
    return {outcome: float(count) for outcome, count in found}


def posts(fake: FakeSlack) -> list[Json]:
    return fake.posted("chat.postMessage")


def settle(fake: FakeSlack, count: int) -> list[Json]:
    """Wait for `count` posts, then give any extra one the time to arrive: none may."""
    fake.wait_for(lambda: len(posts(fake)) >= count, timeout=20)
    time.sleep(1.5)
    return posts(fake)


def test_a_triggered_incident_posts_the_suspects_view_once_in_its_mapped_channel(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(PAGERDUTY_WEBHOOK_SECRETS=PD_SECRET, ONCALL_GRAPH_PAGERDUTY_CHANNELS="PAYMNTS=CPAYMENTS",
                      ONCALL_GRAPH_ALERT_CHANNEL="COPSALERTS")  # fmt: skip
    body = raw(incident_event("Q1PAY", "PAYMNTS", "Payments API"))
    accepted = bot.pagerduty(body, PD_SECRET)
    assert accepted.status_code == 202 and accepted.json() == {"status": "accepted", "incident": "Q1PAY"}
    fake_slack.wait_for(lambda: posts(fake_slack), timeout=20)
    assert bot.pagerduty(body, PD_SECRET).status_code == 202  # PagerDuty redelivers
    for later in ("incident.acknowledged", "incident.resolved"):
        quiet = bot.pagerduty(raw(incident_event("Q1PAY", "PAYMNTS", "Payments API", event_type=later)), PD_SECRET)
        assert quiet.status_code == 202 and quiet.json()["status"] == "ignored"
    [post] = settle(fake_slack, 1)
    shown = text_of(post)
    assert post["channel"] == "CPAYMENTS" and "thread_ts" not in post
    assert "Error rate above 5%" in shown and "https://acme.pagerduty.com/incidents/Q1PAY" in shown
    assert "antifraud" in shown and "r-8812" in shown and "risk-team" in shown  # the suspects view
    assert "suspect" in shown.lower() and "cause" not in shown.lower()
    assert outcomes(bot) == {"posted": 1.0, "duplicate": 1.0, "ignored": 2.0}


def test_signatures_are_checked_over_the_raw_body_and_rotation_is_accepted(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(PAGERDUTY_WEBHOOK_SECRETS=PD_SECRET, ONCALL_GRAPH_ALERT_CHANNEL="COPSALERTS")
    body = raw(incident_event("Q2LED", "PLEDGR2", "Grand-livre (Zahlungsbuch) — 账本",
                              title="Écritures en retard ⚠ 遅延"))  # fmt: skip
    assert b"\xc3\x89critures" in body  # real UTF-8 bytes on the wire, not \u escapes
    tampered = body.replace(b"retard", b"avance")
    assert bot.pagerduty(tampered, signature=signature_of(body)).status_code == 401  # signed before it was changed
    assert bot.pagerduty(body, "not-the-secret").status_code == 401
    assert bot.pagerduty(body, signature="").status_code == 401  # no header at all
    rejected = bot.pagerduty(body, OLD_SECRET)
    assert rejected.status_code == 401 and "X-PagerDuty-Signature" in rejected.json()["error"]
    assert bot.pagerduty(b'{"event": {"event_type": "incident.triggered", ', PD_SECRET).status_code == 400
    missing = bot.pagerduty(b'{"event": {"event_type": "incident.triggered", "data": {"id": "Q9"}}}', PD_SECRET)
    assert missing.status_code == 400 and "event.data.service" in missing.json()["error"]
    assert httpx.get(f"{bot.url}/pagerduty/webhook", timeout=5).status_code == 405
    assert bot.pagerduty(b"{" + b" " * (300 * 1024) + b"}", PD_SECRET).status_code == 413
    ping = raw({"event": {"id": "p1", "event_type": "pagey.ping", "resource_type": "pagey", "data": {"type": "ping"}}})
    assert bot.pagerduty(ping, PD_SECRET).status_code == 202
    assert posts(fake_slack) == []
    rotation = bot.pagerduty(body, OLD_SECRET, PD_SECRET)  # PagerDuty signs with both while rotating
    assert rotation.status_code == 202
    [post] = settle(fake_slack, 1)
    shown = text_of(post)
    assert post["channel"] == "COPSALERTS"  # ledger has no mapping and no annotation
    assert "Écritures en retard ⚠ 遅延" in shown and "Alert on ledger" in shown
    assert outcomes(bot) == {
        "rejected_signature": 4.0, "rejected_payload": 2.0, "rejected_size": 1.0, "ignored": 1.0, "posted": 1.0
    }  # fmt: skip


def test_an_unmapped_service_goes_to_its_annotated_channel_and_an_unknown_one_to_the_alert_channel(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    sources = write_sources(tmp_path / "refunds", extra_catalog=REFUNDS)
    bot = bot_factory(sources=sources, PAGERDUTY_WEBHOOK_SECRETS=f"{OLD_SECRET},{PD_SECRET}",
                      ONCALL_GRAPH_PAGERDUTY_CHANNELS="PAYMNTS=CPAYMENTS",
                      ONCALL_GRAPH_ALERT_CHANNEL="COPSALERTS")  # fmt: skip
    assert bot.pagerduty(raw(incident_event("Q3REF", "PREFUND", "Refunds")), OLD_SECRET).status_code == 202
    fake_slack.wait_for(lambda: posts(fake_slack), timeout=20)
    assert bot.pagerduty(raw(incident_event("Q4UNK", "PNOSUCH", "Paymants Gatewya")), PD_SECRET).status_code == 202
    refunds, unknown = settle(fake_slack, 2)
    assert refunds["channel"] == "CREFUNDS" and "Alert on refunds" in text_of(refunds)
    assert "payments" in text_of(refunds)  # what refunds depends on
    shown = text_of(unknown)
    assert unknown["channel"] == "COPSALERTS"
    assert "No entity named *Paymants Gatewya* in the graph" in shown and "Q4UNK" in shown
    buttons = [e for b in unknown["blocks"] if b.get("type") == "actions" for e in b["elements"]]
    assert any(json.loads(b["value"]) == {"cmd": "suspects", "name": "component:default/payments"} for b in buttons)
    fake_slack.fail_next("chat.postMessage", status=500, times=4)  # every attempt the bot makes
    assert bot.pagerduty(raw(incident_event("Q5FAIL", "PAYMNTS", "Payments API")), PD_SECRET).status_code == 202
    fake_slack.wait_for(lambda: fake_slack.calls().count("chat.postMessage") == 6, timeout=20)
    fake_slack.wait_for(lambda: "could not post PagerDuty incident Q5FAIL" in bot.output(), timeout=5)
    assert len(settle(fake_slack, 2)) == 2
    assert outcomes(bot) == {"posted": 1.0, "unresolved": 1.0, "failed": 1.0}
    assert "could not post PagerDuty incident Q5FAIL in CPAYMENTS" in bot.output()


def test_without_a_webhook_secret_the_endpoint_is_not_served(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    body = raw(incident_event("Q5", "PAYMNTS", "Payments API"))
    assert bot.pagerduty(body, PD_SECRET).status_code == 404
    assert posts(fake_slack) == []


def test_two_bots_on_one_postgresql_post_an_incident_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, postgres_url: str, tmp_path: Path
) -> None:
    sources = write_sources(tmp_path / "shared")
    settings = {"PAGERDUTY_WEBHOOK_SECRETS": PD_SECRET, "ONCALL_GRAPH_ALERT_CHANNEL": "COPSALERTS"}
    one = bot_factory("one", database_url=postgres_url, sources=sources, **settings)
    two = bot_factory("two", database_url=postgres_url, sources=sources, **settings)
    body = raw(incident_event("Q6PAY", "PAYMNTS", "Payments API"))
    assert one.pagerduty(body, PD_SECRET).status_code == 202
    assert two.pagerduty(body, PD_SECRET).status_code == 202
    [post] = settle(fake_slack, 1)
    assert post["channel"] == "COPSALERTS" and "Alert on payments" in text_of(post)
    assert outcomes(one).get("duplicate", 0) + outcomes(two).get("duplicate", 0) == 1.0


def test_a_bad_channel_mapping_stops_serve_with_the_setting_named(tmp_path: Path, fake_slack: FakeSlack) -> None:
    ours = ("ONCALL_GRAPH_", "SLACK_", "DATABASE_", "PAGERDUTY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    env |= {
        "PYTHONPATH": str(ROOT), "PORT": "0", "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "s",
        "SLACK_API_URL": fake_slack.url, "DATABASE_URL": f"sqlite:///{tmp_path / 'graph.db'}",
        "PAGERDUTY_WEBHOOK_SECRETS": PD_SECRET, "ONCALL_GRAPH_PAGERDUTY_CHANNELS": "PAYMNTS",
        **write_sources(tmp_path / "sources"),
    }  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "bot.cli", "serve"], env=env, capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 2
    assert "ONCALL_GRAPH_PAGERDUTY_CHANNELS: expected SERVICE_ID_OR_ENTITY=CHANNEL pairs, got 'PAYMNTS'" in done.stderr
    assert "Traceback" not in done.stderr

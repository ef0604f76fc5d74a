"""The running bot over real HTTP: signed Slack requests in, messages out at a fake Slack API."""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import ADMIN, ALERTS, Bot, write_sources
from tests.fakes.slack_api import FakeSlack

Json = dict[str, Any]


def text_of(message: Json) -> str:
    """Everything a person would read in a message: its text and every text in its blocks."""
    parts = [str(message.get("text", ""))]

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "text" and isinstance(item, str):
                    parts.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(message.get("blocks", []))
    return html.unescape("\n".join(parts))  # Slack mrkdwn escapes &, < and >


def only_response(fake: FakeSlack, name: str) -> Json:
    fake.wait_for(lambda: fake.responses(name), timeout=20)
    [response] = fake.responses(name)
    return response


def test_blast_radius_command_answers_with_cited_paths_owners_survivors_and_graph_age(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    assert bot.command("/blast-radius", "redis", fake_slack.response_url("c1")).status_code == 200
    response = only_response(fake_slack, "c1")
    shown = text_of(response)
    assert response.get("response_type") == "ephemeral"
    for entity in ("token-cache", "auth-service", "login-flow", "checkout", "cart"):
        assert entity in shown
    assert "auth-service -depends_on-> token-cache" in shown and "catalog/identity.yaml" in shown
    assert "identity-team" in shown
    assert "kafka" in shown  # a survivor
    assert "old" in shown  # the graph's age in the footer
    assert len(response["blocks"]) <= 50


def test_share_button_posts_the_answer_in_channel(bot_factory: Callable[..., Bot], fake_slack: FakeSlack) -> None:
    bot = bot_factory()
    bot.command("/blast-radius", "redis 1", fake_slack.response_url("c1"))
    response = only_response(fake_slack, "c1")
    buttons = [e for b in response["blocks"] if b.get("type") == "actions" for e in b["elements"]]
    share = next(b for b in buttons if b["action_id"] == "share_answer")
    assert bot.action("share_answer", share["value"], fake_slack.response_url("c2")).status_code == 200
    shared = only_response(fake_slack, "c2")
    assert shared.get("response_type") == "in_channel"
    assert "token-cache" in text_of(shared) and "login-flow" not in text_of(shared)  # depth 1 kept


def test_suspects_command_flags_the_recent_deploy_as_a_suspect(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    bot.command("/suspects", "payments 6h", fake_slack.response_url("s1"))
    shown = text_of(only_response(fake_slack, "s1"))
    assert "antifraud" in shown and "r-8812" in shown and "risk-team" in shown
    assert "suspect" in shown.lower() and "cause" not in shown.lower()
    assert "r-7000" not in shown  # three days old: outside the window


def test_slash_commands_take_the_command_lines_flags(bot_factory: Callable[..., Bot], fake_slack: FakeSlack) -> None:
    bot = bot_factory()
    asked = {
        "f1": ("/suspects", "payments --since 30m"),  # r-8812 is 55 minutes old
        "f2": ("/suspects", "payments --since=1h"),
        "f3": ("/suspects", "payments since 4d --depth 1"),  # r-7000, three days old, on ledger
        "f4": ("/suspects", "payments --since soon"),
        "f5": ("/blast-radius", "redis --depth 1"),
    }
    for name, (command, text) in asked.items():
        bot.command(command, text, fake_slack.response_url(name))
    shown = {name: text_of(only_response(fake_slack, name)) for name in asked}
    assert "no entity named" not in " ".join(shown.values())
    assert "r-8812" not in shown["f1"] and "r-8812" in shown["f2"] and "r-7000" not in shown["f2"]
    assert "r-8812" in shown["f3"] and "r-7000" in shown["f3"] and "up to 1 hop" in shown["f3"]
    assert "/suspects: --since: expected a window such as 6h, 30m or 2d" in shown["f4"]
    assert "Usage: /suspects NAME [--since 6h] [--depth 2]" in shown["f4"]
    assert "token-cache" in shown["f5"] and "login-flow" not in shown["f5"]


def test_unknown_name_gets_suggestions_as_buttons_that_rerun_the_command(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    bot.command("/blast-radius", "redsi", fake_slack.response_url("u1"))
    response = only_response(fake_slack, "u1")
    buttons = [e for b in response["blocks"] if b.get("type") == "actions" for e in b["elements"]]
    pick = next(b for b in buttons if "redis" in b["value"])
    assert json.loads(pick["value"])["cmd"] == "blast-radius"
    bot.action(pick["action_id"], pick["value"], fake_slack.response_url("u2"))
    assert "token-cache" in text_of(only_response(fake_slack, "u2"))


def test_requests_that_are_unsigned_wrongly_signed_or_stale_get_401(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    url = fake_slack.response_url("x")
    unsigned = httpx.post(f"{bot.url}/slack/events", content=b"command=%2Fgraph-lag", timeout=10,
                          headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert unsigned.status_code == 401
    assert bot.command("/blast-radius", "redis", url, secret="wrong").status_code == 401
    assert bot.command("/blast-radius", "redis", url, age=6 * 60).status_code == 401
    assert fake_slack.responses("x") == []


def test_graph_lag_is_for_admins_only(bot_factory: Callable[..., Bot], fake_slack: FakeSlack) -> None:
    bot = bot_factory()
    bot.command("/graph-lag", "", fake_slack.response_url("l1"), user="UNOBODY")
    refused = text_of(only_response(fake_slack, "l1"))
    assert "admin" in refused.lower() and "catalog:" not in refused
    assert "refused /graph-lag" in bot.output()
    bot.command("/graph-lag", "", fake_slack.response_url("l2"), user=ADMIN)
    shown = text_of(only_response(fake_slack, "l2"))
    assert "catalog:" in shown and "deploys:" in shown


def mention(ts: str, text: str = "<@UBOT> what breaks if the token cache goes down?") -> Json:
    return {"type": "app_mention", "user": "UUSER", "text": text, "ts": ts, "channel": "COPS", "event_ts": ts}


def test_a_retried_event_and_the_mention_message_twin_get_one_reply(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    assert bot.event(mention("1700000000.000100"), event_id="Ev1").status_code == 200
    bot.event(
        mention("1700000000.000100"),
        event_id="Ev1",
        **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"},
    )
    twin = {**mention("1700000000.000100"), "type": "message"}
    bot.event(twin, event_id="Ev2")
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=20)
    time.sleep(1.5)  # give any duplicate reply the time to arrive: none may
    [reply] = fake_slack.posted("chat.postMessage")
    assert reply["thread_ts"] == "1700000000.000100"
    assert "auth-service" in text_of(reply)


def pagerduty_alert(ts: str, status: str = "Triggered") -> Json:
    card = {
        "color": "#a50000" if status == "Triggered" else "#00a500",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": f"{status}: P1 incident"}},
            {"type": "section", "text": {"type": "mrkdwn",
             "text": "<https://acme.pagerduty.com/incidents/Q1ABCDEF|Payments error rate above 5%>"}},
            {"type": "section", "fields": [
                {"type": "mrkdwn", "text": "*Service:*\nPayments"},
                {"type": "mrkdwn", "text": "*Urgency:*\nHigh"}]},
        ],
    }  # fmt: skip
    return {
        "type": "message", "channel": ALERTS, "ts": ts, "text": "", "bot_id": "BPAGERDUTY",
        "bot_profile": {"id": "BPAGERDUTY", "name": "PagerDuty", "app_id": "APAGERDUTY"}, "attachments": [card],
    }  # fmt: skip


def test_a_pagerduty_alert_gets_one_thread_reply_and_its_resolve_update_none(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    bot.event(pagerduty_alert("1700000100.000200"), event_id="EvA1")
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=20)
    bot.event(pagerduty_alert("1700000200.000300", status="Resolved"), event_id="EvA2")
    bot.event({"type": "message", "channel": ALERTS, "ts": "1700000300.0004", "text": "chatter", "user": "UX"},
              event_id="EvA3")  # fmt: skip
    time.sleep(1.5)
    [reply] = fake_slack.posted("chat.postMessage")
    assert reply["thread_ts"] == "1700000100.000200" and reply["channel"] == ALERTS
    shown = text_of(reply)
    assert "antifraud" in shown and "r-8812" in shown and "risk-team" in shown


def test_a_restricted_entity_never_appears_to_an_outsider(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    bot.command("/blast-radius", "redis", fake_slack.response_url("o1"), channel="COPS")
    outsider = text_of(only_response(fake_slack, "o1"))
    assert "vault-proxy" not in outsider and "secops" not in outsider
    assert "secrets-ui" in outsider and "hidden" in outsider
    bot.command("/blast-radius", "vault-proxy", fake_slack.response_url("o2"), channel="COPS")
    unresolved = only_response(fake_slack, "o2")
    assert "no entity named" in text_of(unresolved).lower()
    buttons = [e for b in unresolved["blocks"] if b.get("type") == "actions" for e in b["elements"]]
    assert buttons and all("vault" not in b["value"] for b in buttons)
    bot.command("/blast-radius", "redis", fake_slack.response_url("o3"), channel="CSECURITY")
    assert "vault-proxy" in text_of(only_response(fake_slack, "o3"))


def test_an_oversized_answer_stays_within_slack_limits_and_attaches_the_rest(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    spec = "spec: {type: service, lifecycle: production, owner: platform, "
    spec += "dependsOn: ['resource:redis']}\n"
    many = "".join(
        "---\napiVersion: backstage.io/v1alpha1\nkind: Component\n"
        + f"metadata: {{name: worker-with-a-long-name-{i:04d}}}\n"
        + spec
        for i in range(400)
    )
    bot = bot_factory(sources=write_sources(tmp_path / "big", extra_catalog="\n" + many))
    bot.command("/blast-radius", "redis", fake_slack.response_url("big"))
    response = only_response(fake_slack, "big")
    blocks = response["blocks"]
    assert len(blocks) <= 50
    assert all(len(b.get("text", {}).get("text", "")) <= 3000 for b in blocks)
    assert sum(len(json.dumps(b)) for b in blocks) < 14_000
    assert "more" in text_of(response)

    def texts() -> list[dict[str, Any]]:  # a picture is uploaded too
        return [u for u in fake_slack.uploads() if u["filename"].endswith(".txt")]

    fake_slack.wait_for(texts, timeout=20)
    [upload] = texts()
    assert "worker-with-a-long-name-0399" in upload["content"]


def test_healthz_and_metrics_are_served(bot_factory: Callable[..., Bot], fake_slack: FakeSlack) -> None:
    bot = bot_factory()
    health = httpx.get(f"{bot.url}/healthz", timeout=5).json()
    assert health["ready"] is True and health["entities"] > 50
    bot.command("/blast-radius", "redis", fake_slack.response_url("m1"))
    only_response(fake_slack, "m1")
    metrics = httpx.get(f"{bot.url}/metrics", timeout=5).text
    assert 'oncall_graph_slack_requests_total{kind="blast-radius"} 1.0' in metrics


def test_two_bots_on_one_postgresql_answer_a_retried_event_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, postgres_url: str, tmp_path: Path
) -> None:
    sources = write_sources(tmp_path / "shared")
    one = bot_factory("one", database_url=postgres_url, sources=sources)
    two = bot_factory("two", database_url=postgres_url, sources=sources)
    event = mention("1700000500.000500", "<@UBOT> who owns payments?")
    one.event(event, event_id="EvP")
    two.event(event, event_id="EvP", **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=20)
    time.sleep(1.5)
    assert len(fake_slack.posted("chat.postMessage")) == 1


def test_an_alert_for_an_unknown_service_gets_a_short_reply_with_suggestions(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    alert = pagerduty_alert("1700000600.000600")
    alert["attachments"][0]["blocks"][2]["fields"][0]["text"] = "*Service:*\nPaymnts Gateway"
    alert["attachments"][0]["blocks"][1]["text"]["text"] = "<https://acme.pagerduty.com/incidents/Q9ZZZZZZ|Errors>"
    bot.event(alert, event_id="EvU1")
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=20)
    [reply] = fake_slack.posted("chat.postMessage")
    shown = text_of(reply)
    assert reply["thread_ts"] == "1700000600.000600"
    assert "Paymnts Gateway" in shown and "payments" in shown.lower()


def test_a_stale_source_is_announced_once_in_the_alert_channel(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    sources = write_sources(tmp_path / "lagging")
    sources["ONCALL_GRAPH_DEPLOYS"] = str(tmp_path / "missing-deploys.jsonl")
    name = f"deploys:{tmp_path / 'missing-deploys.jsonl'}"
    bot_factory(sources=sources, ONCALL_GRAPH_ALERT_CHANNEL="COPSALERTS", ONCALL_GRAPH_SYNC_INTERVAL="1",
                ONCALL_GRAPH_STALE_AFTER=f"{name}=1")  # fmt: skip

    def in_alert_channel() -> list[dict[str, Any]]:
        return [m for m in fake_slack.posted("chat.postMessage") if m["channel"] == "COPSALERTS"]

    fake_slack.wait_for(in_alert_channel, timeout=30)
    time.sleep(3)  # several more sync ticks: the alert must not repeat
    [alert] = in_alert_channel()
    assert "missing-deploys.jsonl" in text_of(alert) and "stale" in text_of(alert).lower()


def test_runbook_passages_are_quoted_but_never_one_naming_a_hidden_entity(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "redis.md").write_text(
        "# Redis runbook\n\n## Secrets\n\nRedis passwords rotate through the vault proxy.\n\n"
        "## Restart\n\nRestart redis one replica at a time.\n"
    )
    bot = bot_factory(sources={**write_sources(tmp_path / "sources"), "ONCALL_GRAPH_DOCS": str(docs)})
    bot.command("/blast-radius", "redis", fake_slack.response_url("q1"), channel="COPS")
    outsider = text_of(only_response(fake_slack, "q1"))
    assert "docs/redis.md §Restart" in outsider and "Restart redis one replica" in outsider
    assert "§Secrets" not in outsider and "vault" not in outsider
    bot.command("/blast-radius", "redis", fake_slack.response_url("q2"), channel="CSECURITY")
    assert "docs/redis.md §Secrets" in text_of(only_response(fake_slack, "q2"))

"""One question, every front: the CLI's JSON and text, the MCP tool, the Slack slash command, a mention,
an alert thread and a PagerDuty webhook post agree on the entities, the passages and the stale warning.

The deploy feed is given a 2-second limit (ONCALL_GRAPH_STALE_AFTER) and left to go past it: every
front must say so, naming that source.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.mcp.tools import GraphAccess, call_tool
from graph.exposure.visibility import EVERYONE
from graph.health.freshness import StalePolicy
from graph.naming.refs import short_name
from sync.refresh import load_snapshot
from sync.store.database import make_engine
from sync.store.fact_store import Store
from tests.e2e.conftest import ALERTS, ROOT, Bot, write_sources
from tests.e2e.test_pagerduty_webhook import PD_SECRET, incident_event, raw
from tests.e2e.test_slack_bot import mention, only_response, pagerduty_alert, text_of
from tests.fakes.slack_api import FakeSlack

Json = dict[str, Any]
INTERVAL = "600"  # no scheduled sync lands during the test: the deploy feed stays past its limit


def clock() -> datetime:
    return datetime.now(UTC)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done


def cli_env(database_url: str, stale_after: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "ANTHROPIC_"))}
    return {**base, "PYTHONPATH": str(ROOT), "DATABASE_URL": database_url, "ONCALL_GRAPH_STALE_AFTER": stale_after,
            "ONCALL_GRAPH_SYNC_INTERVAL": INTERVAL}  # fmt: skip


def without_age(data: Json) -> Json:
    """The JSON minus the graph's age and build time, which move between two reads of one graph (and so
    does the age each warning states: only the source it names is kept)."""
    graph = {k: v for k, v in data.get("graph", {}).items() if k not in ("age_seconds", "built_at")}
    graph["warnings"] = [w.split(" last synced")[0] for w in graph.get("warnings", [])]
    return data | {"graph": graph}


def warned(shown: str, source: str) -> bool:
    return "stale graph" in shown and source in shown


def test_every_front_gives_the_same_answer_and_the_same_stale_warning(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    sources = write_sources(tmp_path / "sources")
    deploys = f"deploys:{sources['ONCALL_GRAPH_DEPLOYS']}"
    stale_after = f"{deploys}=2"
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    bot = bot_factory(database_url=url, sources=sources, ONCALL_GRAPH_STALE_AFTER=stale_after,
                      ONCALL_GRAPH_SYNC_INTERVAL=INTERVAL, PAGERDUTY_WEBHOOK_SECRETS=PD_SECRET,
                      ONCALL_GRAPH_ALERT_CHANNEL="COPSALERTS")  # fmt: skip
    time.sleep(3)  # the deploy feed's 2 s limit passes

    # The command line and the MCP tool, on the database the bot synced.
    env = cli_env(url, stale_after)
    at = clock().replace(microsecond=0)  # one deploy window for the command line and the tool
    found = json.loads(cli(env, "--now", at.isoformat(), "suspects", "payments", "--json").stdout)
    blast = json.loads(cli(env, "blast-radius", "payments", "--json").stdout)
    asked = json.loads(cli(env, "ask", "what breaks if payments goes down?", "--json").stdout)
    blast_text = cli(env, "blast-radius", "payments").stdout
    store = Store(make_engine(url))
    policy = StalePolicy(float(INTERVAL), {deploys: 2.0})
    # The command line is an operator's view: the tools give the same with `mcp --all`.
    access = GraphAccess(lambda: load_snapshot(store, clock), lambda: {}, clock, policy, now=at, viewer=EVERYONE)
    assert without_age(call_tool(access, "blast_radius", {"name": "payments"})) == without_age(blast)
    assert without_age(call_tool(access, "suspects", {"name": "payments"})) == without_age(found)
    for data in (blast, found, asked):
        assert data["graph"]["stale"] is True
        [warning] = data["graph"]["warnings"]
        assert warning.startswith(f"{deploys} last synced") and "(limit 2 s)" in warning
    assert warned(blast_text, deploys)

    # Slack: the two slash commands, a mention, an alert thread; then a PagerDuty webhook post.
    bot.command("/blast-radius", "payments", fake_slack.response_url("b"))
    bot.command("/suspects", "payments", fake_slack.response_url("s"))
    slack_blast, slack_suspects = text_of(only_response(fake_slack, "b")), text_of(only_response(fake_slack, "s"))
    bot.event(mention("1700000000.000100", "<@UBOT> what breaks if payments goes down?"), event_id="EvM")
    bot.event(pagerduty_alert("1700000100.000200"), event_id="EvA")
    # Both thread replies, not any two posts: the stale source's own alert goes to a channel too.
    replied = {"1700000000.000100", "1700000100.000200"}
    fake_slack.wait_for(
        lambda: replied <= {p.get("thread_ts") for p in fake_slack.posted("chat.postMessage")}, timeout=20
    )
    assert bot.pagerduty(raw(incident_event("Q1PAY", "PAYMNTS", "Payments API")), PD_SECRET).status_code == 202

    def webhook_posts() -> list[str]:  # the channel also gets the stale source's own announcement
        return [text_of(p) for p in fake_slack.posted("chat.postMessage") if "incidents/Q1PAY" in text_of(p)]

    fake_slack.wait_for(webhook_posts, timeout=20)
    threads = {p.get("thread_ts"): p for p in fake_slack.posted("chat.postMessage")}
    slack_mention, alert_thread = text_of(threads["1700000000.000100"]), text_of(threads["1700000100.000200"])
    [webhook_post] = webhook_posts()
    assert threads["1700000100.000200"]["channel"] == ALERTS

    for shown in (slack_blast, slack_suspects, slack_mention, alert_thread, webhook_post):
        assert warned(shown, deploys), shown
    # The same entities on every front that shows them.
    impacted = {short_name(i["entity"]) for i in blast["impacted"]}
    assert impacted and all(name in slack_blast and name in slack_mention for name in impacted)
    assert asked["entities"] == [blast["entity"]]
    dependencies = {short_name(d["entity"]) for d in found["dependencies"]}
    suspect_ids = {d["id"] for dep in found["dependencies"] for d in dep["deploys"]}
    assert suspect_ids == {"r-8812"}
    for shown in (slack_suspects, alert_thread, webhook_post):
        assert all(name in shown for name in dependencies) and "r-8812" in shown
    # The same passages: the alert thread and the webhook post quote what /suspects quotes.
    blast_passages = [p["locator"] for p in blast["passages"]]
    suspects_passages = [p["locator"] for p in found["passages"]]
    assert blast_passages and suspects_passages
    assert all(locator in slack_blast and locator in blast_text for locator in blast_passages)
    for shown in (slack_suspects, alert_thread, webhook_post):
        assert all(locator in shown for locator in suspects_passages), shown

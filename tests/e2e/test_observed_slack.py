"""Observed calls through the running bot (`oncall-graph serve`, the fake Slack, signed requests over
HTTP): a sparse catalog whose blast radius the service graph (a real Prometheus where installed)
widens, each observed hop marked and cited with its calls; messaging that breaks no producer; an
answer that finds nothing saying how much the graph can know; a Prometheus gone down, its last
good edges kept while /graph-lag names the failure; and a Jaeger answering empty, held, its edges kept."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from slack_sdk.models.blocks import Block

from tests.e2e.conftest import ADMIN, Bot
from tests.e2e.test_slack_bot import only_response, text_of
from tests.fakes.jaeger_query import Call, jaeger_query
from tests.fakes.prometheus_server import prometheus
from tests.fakes.slack_api import FakeSlack
from tests.service_graph_series import END, SERIES

CATALOG = str(Path(__file__).resolve().parents[1] / "data" / "observed" / "catalog.yaml")
SOURCE_DOWN_SECONDS = 30


def answer(bot: Bot, fake_slack: FakeSlack, command: str, text: str, name: str) -> str:
    """The command's answer as a person reads it, every block first parsed as Block Kit."""
    assert bot.command(command, text, fake_slack.response_url(name), user=ADMIN).status_code == 200
    response = only_response(fake_slack, name)
    for block in response["blocks"]:
        parsed = Block.parse(block)
        assert parsed is not None, block
        parsed.validate_json()
    return text_of(response)


def lag_until(bot: Bot, fake_slack: FakeSlack, shown: str) -> str:
    """/graph-lag, asked every half second until it shows `shown` (a sync tick away) or time is up."""
    deadline = time.monotonic() + SOURCE_DOWN_SECONDS
    for attempt in itertools.count():
        lag = answer(bot, fake_slack, "/graph-lag", "", f"lag-until-{attempt}")
        if shown in lag or time.monotonic() > deadline:
            return lag
        time.sleep(0.5)
    raise AssertionError("itertools.count never ends")


def hops(shown: str) -> list[str]:
    """The cited hops of a blast radius, `a -rel-> b (marks) [sources] xN`, each shown as code."""
    return [line.strip().strip("`") for line in shown.splitlines() if " -" in line and "-> " in line]


def no_dates(lines: list[str]) -> list[str]:
    """The hops without the window's end, which moves with the clock between two answers."""
    return [re.sub(r" to \d{4}-\d\d-\d\d \d\d:\d\d UTC", "", line) for line in lines]


def test_the_service_graph_widens_the_blast_radius_in_slack_and_a_prometheus_gone_down_keeps_its_edges(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    with prometheus(SERIES, END) as server:
        url = server.url
        source = f"service-graph:{url}"
        bot = bot_factory(
            sources={"ONCALL_GRAPH_CATALOG": CATALOG, "ONCALL_GRAPH_SERVICE_GRAPH": url},
            ONCALL_GRAPH_SYNC_INTERVAL="1",
        )
        widened = answer(bot, fake_slack, "/blast-radius", "orders-db", "orders")
        assert "If orders-db goes down*: 3 break · 0 degrade" in widened
        cited = hops(widened)
        assert f"cart -calls-> orders-db (observed) [service-graph {url} · 1,300 calls in 7 d to " in cited[0]
        assert cited[0].endswith(" UTC, 0% failed] x1")
        assert any(
            line.startswith(f"checkout -calls-> cart (observed) [service-graph {url} · 650 calls in 7 d to ")
            and line.endswith(" UTC, 2.0% failed] x1")
            for line in cited
        )
        assert any(line.startswith("frontend -calls-> checkout (observed)") for line in cited)

        # checkout's one declared dependency, also seen calling: one hop, both marks, cited by both.
        corroborated = hops(answer(bot, fake_slack, "/blast-radius", "payments", "payments"))[0]
        assert corroborated.startswith(f"checkout -depends_on-> payments (declared + observed) [{CATALOG}#3, ")
        assert f"service-graph {url} · 260 calls in 7 d to " in corroborated and corroborated.endswith("] x2")

        # checkout sends to accounting through a queue, and only `user` calls frontend: neither
        # answer finds a dependent, and each says how much the graph could have found.
        coverage = f"1 of 6 components declare dependencies; 6 have observed traffic (service-graph {url})."
        for entity in ("accounting", "frontend"):
            nothing = answer(bot, fake_slack, "/blast-radius", entity, entity)
            assert f"No dependents of {entity} are declared or observed. {coverage}" in nothing
            assert hops(nothing) == []

        lag = answer(bot, fake_slack, "/graph-lag", "", "lag-up")
        assert f"✅ ok *{source}*" in lag

    # Prometheus is down: every sync from now on fails to reach it.
    lag = lag_until(bot, fake_slack, f"❌ FAILING *{source}*")
    assert f"graph is stale*: {source} (failing)" in lag
    assert f"❌ FAILING *{source}*" in lag and "last error:" in lag
    kept = answer(bot, fake_slack, "/blast-radius", "orders-db", "orders-after")
    assert "If orders-db goes down*: 3 break · 0 degrade" in kept
    assert no_dates(hops(kept)) == no_dates(cited)


def test_a_jaeger_that_answers_empty_is_held_and_the_blast_radius_keeps_its_observed_edges(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    with jaeger_query() as jaeger:
        ago = datetime.now(UTC) - timedelta(hours=1)
        links = (
            ("frontend", "checkoutservice", 120),
            ("checkoutservice", "cartservice", 40),
            ("cartservice", "orders", 80),
        )
        jaeger.calls += [Call(client, server, calls, ago) for client, server, calls in links]
        source = f"jaeger:{jaeger.url}"
        bot = bot_factory(
            sources={"ONCALL_GRAPH_CATALOG": CATALOG, "ONCALL_GRAPH_JAEGER": jaeger.url}, ONCALL_GRAPH_SYNC_INTERVAL="1"
        )
        widened = answer(bot, fake_slack, "/blast-radius", "orders-db", "orders")
        assert "If orders-db goes down*: 3 break · 0 degrade" in widened
        cited = hops(widened)
        assert cited[0].startswith(f"cart -calls-> orders-db (observed) [jaeger {jaeger.url} · 80 calls in 7 d to ")
        assert cited[0].endswith(" UTC, failures not reported] x1")

        jaeger.calls = []  # the query service answers, with no links at all: a read that would drop every edge
        lag = lag_until(bot, fake_slack, f"⏸ HELD *{source}*")
        assert f"⏸ HELD *{source}*" in lag and "change held for review: would drop 3 of 3 facts" in lag
        kept = answer(bot, fake_slack, "/blast-radius", "orders-db", "orders-after")
        assert no_dates(hops(kept)) == no_dates(cited)

"""A change held for review, seen through the running bot: `/graph-lag`, `/metrics` and one alert
in the alert channel when the source turns held, and one when it recovers."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.e2e.conftest import ADMIN, Bot
from tests.e2e.test_observability import labelled, scrape_until, value
from tests.e2e.test_slack_bot import only_response, text_of
from tests.fakes.slack_api import FakeSlack
from tests.sync.held_catalog import MAX_DROP, write_catalog

ALERT_CHANNEL = "COPSALERTS"


def test_a_held_change_shows_in_graph_lag_metrics_and_one_alert_per_transition(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path, database_url: str
) -> None:
    catalog = write_catalog(tmp_path / "catalog")
    name = f"catalog:{catalog}"
    bot = bot_factory(
        database_url=database_url, sources={"ONCALL_GRAPH_CATALOG": catalog}, ONCALL_GRAPH_SYNC_INTERVAL="1",
        ONCALL_GRAPH_MAX_DROP=str(MAX_DROP), ONCALL_GRAPH_ALERT_CHANNEL=ALERT_CHANNEL,
    )  # fmt: skip
    alerts = lambda: [m for m in fake_slack.posted("chat.postMessage") if m["channel"] == ALERT_CHANNEL]  # noqa: E731
    synced = scrape_until(bot, lambda s: value(s, "oncall_graph_source_state", source=name, state="ok") == 1.0)
    assert value(synced, "oncall_graph_source_held", source=name) == 0.0

    write_catalog(tmp_path / "catalog", broken=True)
    fake_slack.wait_for(alerts, timeout=30)
    time.sleep(3)  # several more sync ticks, each holding the change again: the alert must not repeat
    [held_alert] = alerts()
    shown = text_of(held_alert)
    assert f"source {name} is stale (change held for review)" in shown
    assert "would drop 3 of 13 facts (limit 20%)" in shown and "services.yaml#2" in shown

    bot.command("/graph-lag", "", fake_slack.response_url("lag"), user=ADMIN)
    lag = text_of(only_response(fake_slack, "lag"))
    assert f"graph is stale*: {name} (held)" in lag and f"⏸ HELD *{name}*" in lag
    assert "change held for review: would drop 3 of 13 facts" in lag and "services.yaml#2" in lag
    assert "all sources fresh" not in lag

    samples = scrape_until(bot, lambda s: value(s, "oncall_graph_source_held", source=name) == 1.0)
    assert value(samples, "oncall_graph_source_held", source=name) == 1.0
    assert value(samples, "oncall_graph_source_stale", source=name) == 1.0
    states = {k: v for k, v in labelled(samples, "oncall_graph_source_state", "state").items() if v}
    assert states == {"held": 1.0}

    write_catalog(tmp_path / "catalog")  # the source reads as its applied version again
    fake_slack.wait_for(lambda: len(alerts()) == 2, timeout=30)
    time.sleep(2)
    assert [text_of(m).split("\n")[0] for m in alerts()] == [
        f"⚠ oncall-graph source {name} is stale (change held for review)",
        f"✅ oncall-graph source {name} recovered",
    ]
    recovered = scrape_until(bot, lambda s: value(s, "oncall_graph_source_held", source=name) == 0.0)
    assert value(recovered, "oncall_graph_source_state", source=name, state="ok") == 1.0

"""The metrics class: unresolved names counted by command and logged within a rate, never a label;
no metric takes a label from typed text; source age gauges."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import generate_latest

from bot.telemetry.metrics import Metrics
from bot.telemetry.unresolved_names import PER_MINUTE, UnresolvedNames
from graph.facts import SourceMark
from graph.health.freshness import LagReport, StalePolicy, judge

BY_COMMAND = "oncall_graph_unresolved_names_total"
LOGGER = "bot.telemetry.unresolved_names"


def logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_unresolved_names_are_counted_by_command_and_never_exposed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    metrics = Metrics()
    for typed in ("The Auth Svc", "auth-service", "vault-proxy"):
        metrics.unresolved_name("blast-radius", typed)
    metrics.unresolved_name("suspects", "token_cache")
    assert metrics.registry.get_sample_value(BY_COMMAND, {"command": "blast-radius"}) == 3
    assert metrics.registry.get_sample_value(BY_COMMAND, {"command": "suspects"}) == 1
    exposed = generate_latest(metrics.registry).decode()
    assert not {"auth", "vault", "token"} & set(exposed.replace("_", " ").replace('"', " ").split())
    assert "unresolved_by_name" not in exposed
    assert logged(caplog) == [
        "unresolved name in blast-radius: 'auth'",
        "unresolved name in blast-radius: 'auth'",
        "unresolved name in blast-radius: 'vault proxy'",
        "unresolved name in suspects: 'token cache'",
    ]


def test_no_metric_takes_a_label_from_what_a_user_typed() -> None:
    """Every label of every metric family, after a storm of distinct typed names: none of them."""
    metrics = Metrics()
    for i in range(500):
        metrics.unresolved_name("blast-radius", f"typo number {i}")
    values = {v for m in metrics.registry.collect() for s in m.samples for v in s.labels.values()}
    assert not any("typo" in value for value in values), values


def test_unresolved_names_are_logged_within_a_rate_and_the_rest_counted(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    now = [0.0]
    names = UnresolvedNames(clock=lambda: now[0])
    for i in range(PER_MINUTE + 30):
        names.note("blast-radius", f"svc{i}")
    assert len(logged(caplog)) == PER_MINUTE
    now[0] += 61
    names.note("suspects", "x" * 500 + "\n<!channel>")
    last = logged(caplog)[-1]
    assert last == f"unresolved name in suspects: {'x' * 64!r} (30 more not logged: over {PER_MINUTE} a minute)"
    assert caplog.records[-1].not_logged == 30  # type: ignore[attr-defined]


def test_source_age_is_read_at_every_scrape() -> None:
    now = [datetime(2026, 11, 30, 2, 0, tzinfo=UTC)]
    synced = now[0] - timedelta(seconds=90)
    marks = [SourceMark("catalog:a", synced, ""), SourceMark("deploys:b", None, "boom")]

    def lag() -> LagReport:
        return judge(marks, now[0], StalePolicy(60))

    metrics = Metrics()
    metrics.watch_sources(lag)
    age = "oncall_graph_source_age_seconds"
    assert metrics.registry.get_sample_value(age, {"source": "catalog:a"}) == 90
    now[0] += timedelta(seconds=30)  # no sync in between: the age still grows
    assert metrics.registry.get_sample_value(age, {"source": "catalog:a"}) == 120
    assert metrics.registry.get_sample_value(age, {"source": "deploys:b"}) is None  # never synced: no age
    assert metrics.registry.get_sample_value("oncall_graph_source_stale", {"source": "deploys:b"}) == 1
    assert metrics.registry.get_sample_value("oncall_graph_source_stale", {"source": "catalog:a"}) == 0


def test_a_failing_source_read_leaves_the_rest_of_the_scrape_intact() -> None:
    def lag() -> LagReport:
        raise ConnectionError("database is down")

    metrics = Metrics()
    metrics.watch_sources(lag)
    metrics.entities.set(12)
    exposed = generate_latest(metrics.registry).decode()
    assert "oncall_graph_entities 12.0" in exposed and "oncall_graph_source_age_seconds{" not in exposed

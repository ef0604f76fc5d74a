"""The metrics class: unresolved names by name, with a ceiling on distinct labels; source age gauges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prometheus_client import generate_latest

from bot.telemetry.bounded_labels import DEFAULT_LIMIT, OTHER
from bot.telemetry.metrics import Metrics
from graph.facts import SourceMark
from graph.freshness import LagReport, StalePolicy, judge

BY_NAME = "oncall_graph_unresolved_by_name_total"
BY_COMMAND = "oncall_graph_unresolved_names_total"


def by_name(metrics: Metrics, name: str) -> float | None:
    return metrics.registry.get_sample_value(BY_NAME, {"name": name})


def test_unresolved_names_are_counted_in_their_canonical_form() -> None:
    metrics = Metrics()
    for typed in ("The Auth Svc", "auth-service", "AUTH"):
        metrics.unresolved_name("blast-radius", typed)
    metrics.unresolved_name("suspects", "token_cache")
    assert by_name(metrics, "auth") == 3
    assert by_name(metrics, "token cache") == 1
    assert metrics.registry.get_sample_value(BY_COMMAND, {"command": "blast-radius"}) == 3


def test_only_the_first_hundred_distinct_names_get_a_label_then_other() -> None:
    metrics = Metrics()
    for i in range(DEFAULT_LIMIT):
        metrics.unresolved_name("blast-radius", f"svc{i}")
    metrics.unresolved_name("blast-radius", "one too many")
    metrics.unresolved_name("blast-radius", "and another")
    metrics.unresolved_name("blast-radius", "svc7")  # already known: keeps its own label
    assert by_name(metrics, "one too many") is None and by_name(metrics, OTHER) == 2
    assert by_name(metrics, "svc7") == 2
    exposed = generate_latest(metrics.registry).decode()
    assert exposed.count(f"{BY_NAME}{{") == DEFAULT_LIMIT + 1


def test_a_long_name_is_cut() -> None:
    metrics = Metrics()
    metrics.unresolved_name("blast-radius", "x" * 500)
    assert by_name(metrics, "x" * 64) == 1
    assert metrics.registry.get_sample_value(BY_COMMAND, {"command": "blast-radius"}) == 1


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

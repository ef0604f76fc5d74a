"""Per-source freshness as Prometheus gauges, computed when /metrics is scraped.

Read from the store's source marks at scrape time (not set after each sync), so the age keeps
growing between syncs and a replica that does not lead the sync reports it right too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from graph.health.freshness import OVERDUE, STATES, LagReport

log = logging.getLogger(__name__)
AGE = "oncall_graph_source_age_seconds"
STALE = "oncall_graph_source_stale"
HELD = "oncall_graph_source_held"
STATE = "oncall_graph_source_state"
PROBLEMS = "oncall_graph_source_problems"


def _families() -> tuple[GaugeMetricFamily, ...]:
    age = GaugeMetricFamily(AGE, "Seconds since the source's last applied (or confirmed) change", labels=["source"])
    stale = GaugeMetricFamily(
        STALE, "1 when the source is past its limit, never synced, failing or has a change held", labels=["source"]
    )
    held = GaugeMetricFamily(HELD, "1 when a change of the source is held for review", labels=["source"])
    state = GaugeMetricFamily(
        STATE,
        "1 for the source's current state (ok, stale, failing, held), 0 for the others",
        labels=["source", "state"],
    )
    problems = GaugeMetricFamily(
        PROBLEMS,
        "Problems in the source's last applied read, by severity (error: a part dropped or a file unread;"
        " warning: used with a caveat; note: skipped on purpose, e.g. no descriptor)",
        labels=["source", "severity"],
    )
    return age, stale, held, state, problems


class SourceAgeCollector:
    """A custom collector: one `lag()` call (a small read of the sources table) per scrape."""

    def __init__(self, lag: Callable[[], LagReport]) -> None:
        self._lag = lag

    def describe(self) -> Iterator[Metric]:
        # Declared so registering does not call collect() (and so the database) at start.
        yield from _families()

    def collect(self) -> Iterator[Metric]:
        age, stale, held, state, problems = _families()
        try:
            report = self._lag()
        except Exception:  # a database hiccup must not fail the whole scrape
            log.warning("could not read the source marks for /metrics", exc_info=True)
            return
        for source in report.sources:
            if source.age_seconds is not None:  # never synced: no age, but stale says so
                age.add_metric([source.name], source.age_seconds)
            stale.add_metric([source.name], 0.0 if source.ok else 1.0)
            held.add_metric([source.name], 1.0 if source.held else 0.0)
            for name in STATES:  # every state, so a query sees a source leave one as well as enter it
                state.add_metric([source.name, name], 1.0 if source.state == name else 0.0)
            found = source.read_problems
            errors, warnings, notes = (found.errors, found.total - found.errors, found.skipped) if found else (0, 0, 0)
            for severity, count in (("error", errors), ("warning", warnings), ("note", notes)):
                problems.add_metric([source.name, severity], float(count))
        for name in report.never_synced:  # configured, no attempt recorded yet: stale, as every front says
            stale.add_metric([name], 1.0)
            held.add_metric([name], 0.0)
            for state_name in STATES:
                state.add_metric([name, state_name], 1.0 if state_name == OVERDUE else 0.0)
        yield from (age, stale, held, state, problems)

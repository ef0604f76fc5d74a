"""Per-source freshness as Prometheus gauges, computed when /metrics is scraped.

Read from the store's source marks at scrape time (not set after each sync), so the age keeps
growing between syncs and a replica that does not lead the sync reports it right too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from graph.freshness import LagReport

log = logging.getLogger(__name__)
AGE = "oncall_graph_source_age_seconds"
STALE = "oncall_graph_source_stale"


def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
    age = GaugeMetricFamily(AGE, "Seconds since the source's last successful sync", labels=["source"])
    stale = GaugeMetricFamily(
        STALE, "1 when the source is older than its stale threshold or never synced", labels=["source"]
    )
    return age, stale


class SourceAgeCollector:
    """A custom collector: one `lag()` call (a small read of the sources table) per scrape."""

    def __init__(self, lag: Callable[[], LagReport]) -> None:
        self._lag = lag

    def describe(self) -> Iterator[Metric]:
        # Declared so registering does not call collect() (and so the database) at start.
        yield from _families()

    def collect(self) -> Iterator[Metric]:
        age, stale = _families()
        try:
            report = self._lag()
        except Exception:  # a database hiccup must not fail the whole scrape
            log.warning("could not read the source marks for /metrics", exc_info=True)
            return
        for source in report.sources:
            if source.age_seconds is not None:  # never synced: no age, but stale says so
                age.add_metric([source.name], source.age_seconds)
            stale.add_metric([source.name], 1.0 if source.stale else 0.0)
        yield age
        yield stale

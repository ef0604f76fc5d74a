"""The sync observer the server wires in: each source's outcome and duration, and the graph's size,
as Prometheus metrics and (when tracing is on) a span per sync with an event per source.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from bot.telemetry import tracing
from bot.telemetry.metrics import Metrics


class SyncTelemetry:
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def syncing(self) -> AbstractContextManager[object]:
        return tracing.sync_span()

    def source_synced(self, source: str, outcome: str, seconds: float, error: str) -> None:
        self._metrics.sync_seconds.labels(source).observe(seconds)
        self._metrics.sync_results.labels(source, outcome).inc()
        tracing.note_source(source, outcome, seconds, error)

    def graph_built(self, entities: int, edges: int, retired_edges: int) -> None:
        self._metrics.entities.set(entities)
        self._metrics.edges.set(edges)
        self._metrics.retired_edges.set(retired_edges)
        tracing.note_graph(entities, edges, retired_edges)

    def snapshot_updated(self, how: str, seconds: float) -> None:
        self._metrics.snapshot_updates.labels(how).inc()
        self._metrics.snapshot_update_seconds.labels(how).observe(seconds)

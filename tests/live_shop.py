"""The live shop in process: tests/data/live/catalog.yaml and its service graph (LIVE, in a real
Prometheus where installed) synced into an in-memory store, and a look at the present at END."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from graph.snapshot import Snapshot, SnapshotRef
from sync.live import LiveConfig, LiveFeed
from sync.refresh import load_snapshot, sync_once
from sync.sources.registry import SourceAccess, SourceSpec
from sync.sources.trace_options import TraceOptions
from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store
from tests.service_graph_series import END, LIVE

CATALOG = str(Path(__file__).resolve().parent / "data" / "live" / "catalog.yaml")
TRACES = TraceOptions(metric_prefix=LIVE)


def now() -> datetime:
    return datetime.now(UTC)


def live_shop(prometheus_url: str) -> Snapshot:
    engine = make_engine("sqlite:///:memory:")
    migrate(engine)
    store = Store(engine)
    specs = [SourceSpec("catalog", CATALOG), SourceSpec("service-graph", prometheus_url)]
    sync_once(specs, store, SnapshotRef(), now, access=SourceAccess(traces=TRACES), swap=False)
    snapshot = load_snapshot(store, now)
    assert snapshot is not None
    return snapshot


def live_feed(prometheus_url: str, **config: object) -> LiveFeed:
    """The look at END over the live series (`config`: LiveConfig's other fields)."""
    return LiveFeed(replace(LiveConfig(prometheus_url, traces=TRACES, deadline=5.0), **config), lambda: END)

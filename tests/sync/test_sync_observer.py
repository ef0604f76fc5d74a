"""The sync service reports each source's outcome and the graph's size through its observer port."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graph.snapshot import SnapshotRef
from sync.lag import LogNotifier
from sync.leader import EmbeddedLeadership
from sync.schedule import SyncService, SyncSettings, start_scheduler
from sync.sources.registry import SourceSpec
from sync.store.fact_store import Store
from tests.sync.test_refresh import Clock, write_docs


class RecordingObserver:
    """The port implemented by a recorder: what a sync told it, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    @contextmanager
    def syncing(self) -> Iterator[None]:
        self.events.append(("start",))
        yield
        self.events.append(("end",))

    def source_synced(self, source: str, outcome: str, seconds: float, error: str) -> None:
        self.events.append(("source", source, outcome, seconds, error))

    def graph_built(self, entities: int, edges: int, retired_edges: int) -> None:
        self.events.append(("graph", entities, edges, retired_edges))

    def snapshot_updated(self, how: str, seconds: float) -> None:
        self.events.append(("update", how))


def service(store: Store, specs: list[SourceSpec], observer: RecordingObserver) -> SyncService:
    return SyncService(specs, store, SnapshotRef(), Clock(), EmbeddedLeadership(), LogNotifier(), SyncSettings(),
                       observer=observer)  # fmt: skip


def test_each_sync_reports_every_source_outcome_and_duration_inside_the_sync(store: Store, tmp_path: Path) -> None:
    docs = SourceSpec("docs", write_docs(tmp_path / "docs", "The auth service depends on the token cache."))
    broken = SourceSpec("triples", str(tmp_path / "missing.json"))
    observer = RecordingObserver()
    sync = service(store, [docs, broken], observer)
    sync.tick()
    sync.tick()
    sources = [e for e in observer.events if e[0] == "source"]
    assert [(e[1], e[2]) for e in sources] == [
        (docs.name, "applied"), (broken.name, "failed"), (docs.name, "unchanged"), (broken.name, "failed"),
    ]  # fmt: skip
    assert all(isinstance(e[3], float) and e[3] > 0 for e in sources)
    assert "missing.json" in str(sources[1][4]) and sources[0][4] == ""
    # Every report lands inside the sync it belongs to.
    assert observer.events[0] == ("start",) and observer.events.index(("end",)) > observer.events.index(sources[1])


def test_graph_size_counts_entities_edges_and_retired_edges(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    docs = SourceSpec("docs", write_docs(folder, "The auth service depends on the token cache."))
    (folder / "users.md").write_text("The auth service depends on the user db.")
    observer = RecordingObserver()
    sync = service(store, [docs], observer)
    sync.tick()
    assert [e for e in observer.events if e[0] == "graph"] == [("graph", 3, 2, 0)]
    (folder / "users.md").unlink()  # its edge is retired, kept in the history with valid_to set
    sync.tick()
    assert [e for e in observer.events if e[0] == "graph"][-1] == ("graph", 2, 1, 1)
    # A restart loads the stored graph, then reports its size, before any sync.
    restarted = RecordingObserver()
    again = service(store, [docs], restarted)
    again.load()
    assert restarted.events == [("update", "rebuild")]
    again.report_size()
    assert restarted.events == [("update", "rebuild"), ("graph", 2, 1, 1)]


def test_the_scheduler_reports_the_loaded_graph_s_size_at_once(store: Store, tmp_path: Path) -> None:
    docs = SourceSpec("docs", write_docs(tmp_path / "docs", "The auth service depends on the token cache."))
    service(store, [docs], RecordingObserver()).tick()
    observer = RecordingObserver()
    restarted = service(store, [docs], observer)
    restarted.load()
    scheduler = start_scheduler(restarted)
    try:
        deadline = time.monotonic() + 10
        while ("graph", 2, 1, 0) not in observer.events and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        scheduler.shutdown(wait=True)
    # The scheduler's first sync finds the source unchanged and builds nothing: the size is its one-off job's.
    assert [e for e in observer.events if e[0] == "graph"] == [("graph", 2, 1, 0)], observer.events

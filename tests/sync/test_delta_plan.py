"""A deploy delta reads its rows by index on PostgreSQL in the planner's two worst cases: a catalog
synced in one change and analyzed, so that its statistics know of one change id for thousands of
facts (a join from the steps' version range was planned as a scan of every fact, 150 ms a delta at
100k entities); and the same sync before any analyze of autovacuum's, with no statistics at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlalchemy

from graph.snapshot import Snapshot, SnapshotRef
from sync.deltas import Delta, deploy_delta
from sync.lag import LogNotifier
from sync.leader import EmbeddedLeadership
from sync.schedule import SyncService, SyncSettings
from sync.sources.registry import SourceSpec
from sync.store.fact_store import Store
from tests.sync.pushes import push_steps
from tests.sync.test_follower_delta import current, push
from tests.sync.test_refresh import Clock

COMPONENTS = 3000  # with one change id for ~10k facts, the old join's plan already scans them all
STEPS = 450  # pushed deploys, a version step each: more change ids than one statement takes (400)


def write_catalog(folder: Path) -> str:
    """One descriptor file of COMPONENTS services, each owned and depending on the one before it."""
    folder.mkdir()
    docs = []
    for n in range(COMPONENTS):
        spec: dict[str, Any] = {"type": "service", "lifecycle": "production", "owner": f"group:team-{n % 40}"}
        if n:
            spec["dependsOn"] = [f"component:svc-{n - 1}"]
        docs.append(json.dumps({"apiVersion": "backstage.io/v1alpha1", "kind": "Component",
                                "metadata": {"name": f"svc-{n}"}, "spec": spec}))  # fmt: skip
    (folder / "catalog-info.yaml").write_text("\n---\n".join(docs) + "\n")
    return str(folder)


def test_a_delta_after_an_analyzed_sync_reads_its_rows_by_index(postgres_store: Store, tmp_path: Path) -> None:
    store, clock = postgres_store, Clock()
    specs = [SourceSpec("catalog", write_catalog(tmp_path / "catalog"))]
    leader = SyncService(specs, store, SnapshotRef(), clock, EmbeddedLeadership(), LogNotifier(), SyncSettings())
    leader.tick()
    snapshot = current(leader)
    with store.engine.begin() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM facts").scalar_one() > 2 * COMPONENTS
        conn.exec_driver_sql("ANALYZE facts")
    push(store, clock, "d-1", "d-2")
    assert_read_by_index(store, snapshot, clock, 2)


def test_a_delta_of_many_steps_right_after_a_bulk_sync_reads_its_rows_by_index(
    postgres_store: Store, tmp_path: Path
) -> None:
    """Before autovacuum's first analyze of the synced rows (up to a minute, longer on a busy
    server) the planner has no statistics: each of the 400 change ids of a statement counts as
    0.5% of the facts, so the statement as all of them (at 100k, a start 5000 steps behind spent
    2.1 s on 13 such scans). The store analyzes after a bulk change itself."""
    store, clock = postgres_store, Clock()
    specs = [SourceSpec("catalog", write_catalog(tmp_path / "catalog"))]
    leader = SyncService(specs, store, SnapshotRef(), clock, EmbeddedLeadership(), LogNotifier(), SyncSettings())
    leader.tick()
    snapshot = current(leader)
    push_steps(store, clock, ({"id": f"d-{n}", "service": f"svc-{n}", "deployed_at": clock().isoformat()}
                              for n in range(STEPS)))  # fmt: skip
    assert_read_by_index(store, snapshot, clock, STEPS)


def assert_read_by_index(store: Store, snapshot: Snapshot, clock: Clock, added: int) -> None:
    """The delta from `snapshot` to the stored version adds `added` deploys, and PostgreSQL plans
    none of its reads of `facts` as a scan of the table."""
    reads: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if "FROM facts" in statement:
            reads.append((statement, parameters))

    sqlalchemy.event.listen(store.engine, "before_cursor_execute", keep)
    try:
        delta = deploy_delta(store, snapshot, store.graph_version(), None, clock)
    finally:
        sqlalchemy.event.remove(store.engine, "before_cursor_execute", keep)
    assert isinstance(delta, Delta) and (delta.added, delta.rows) == (added, added)

    assert reads, "the delta read no fact rows"
    with store.engine.connect() as conn:
        for statement, parameters in reads:
            plan = "\n".join(conn.exec_driver_sql("EXPLAIN " + statement, parameters).scalars())
            assert "Seq Scan on facts" not in plan, plan

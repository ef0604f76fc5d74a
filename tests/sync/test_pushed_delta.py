"""A deploy pushed to a replica joins its snapshot as a delta: entities, edges and indexes kept,
the graph version and the push source's mark moved; anything else moving the version rebuilds."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from graph.snapshot import Snapshot, SnapshotRef
from sync.lag import LogNotifier
from sync.leader import EmbeddedLeadership
from sync.push import PushIntake
from sync.schedule import SyncService, SyncSettings
from sync.sources.reading.limits import ReadLimits
from sync.sources.registry import SourceAccess, SourceSpec
from sync.store.fact_store import Store
from tests.fakes.dripping_feed import dripping_feed
from tests.sync.test_refresh import Clock, write_docs


class Replica:
    """A sync service and its push intake on one store; `push` returns once the snapshot took it."""

    def __init__(self, store: Store, specs: Sequence[SourceSpec], settings: SyncSettings | None = None) -> None:
        self.clock = Clock()
        self.ref = SnapshotRef()
        self.service = SyncService(
            specs, store, self.ref, self.clock, EmbeddedLeadership(), LogNotifier(), settings or SyncSettings()
        )
        self._applied = threading.Event()
        self.intake = PushIntake(store, self.clock, refresh=self._refresh)
        self.intake.open("deploys")

    def _refresh(self) -> None:
        self.service.catch_up()
        self._applied.set()

    def push(self, deploy_id: str, service: str) -> Snapshot:
        self._applied.clear()
        self.clock.advance(minutes=1)
        event = {"id": deploy_id, "service": service, "deployed_at": self.clock().isoformat()}
        assert self.intake.accept("deploys", json.dumps(event), delivery=deploy_id).stored == (deploy_id,)
        assert self._applied.wait(timeout=30), "the pushed deploy was never applied"
        snapshot = self.ref.current()
        assert snapshot is not None
        return snapshot


@pytest.fixture
def replica(store: Store, tmp_path: Path) -> Iterator[Replica]:
    docs = write_docs(tmp_path / "docs", "The auth service depends on the token cache.")
    one = Replica(store, [SourceSpec("docs", docs)])
    one.service.tick()
    yield one
    one.intake.close()


def deploy_ids(snapshot: Snapshot) -> set[str]:
    return {d.id for deploys in snapshot.deploys.values() for d in deploys}


def test_a_pushed_deploy_is_added_as_a_delta_sharing_the_built_indexes(
    replica: Replica, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    before = replica.ref.current()
    assert before is not None and before.version == store.graph_version()
    caplog.set_level(logging.INFO, logger="sync.schedule")
    after = replica.push("ci-1", "auth")
    assert deploy_ids(after) == {"ci-1"} and "component:default/auth-service" in after.deploys
    assert after.derived is before.derived and after.entities is before.entities  # nothing rebuilt
    assert after.version == store.graph_version() == before.version + 1
    mark = after.marks["webhook:deploys"]
    assert mark.pushed and mark.last_success == replica.clock()
    assert set(after.marks) == set(before.marks) | {"webhook:deploys"}  # the configured sources still marked
    assert any("served by delta" in r.getMessage() for r in caplog.records)
    again = replica.push("ci-2", "token cache")
    assert deploy_ids(again) == {"ci-1", "ci-2"} and again.derived is before.derived


def test_a_push_after_another_change_of_the_version_rebuilds(replica: Replica, store: Store) -> None:
    before = replica.ref.current()
    assert before is not None
    store.bump_version(at=replica.clock())  # e.g. an approved review: not a deploy this replica knows
    after = replica.push("ci-1", "auth")
    assert deploy_ids(after) == {"ci-1"} and after.version == store.graph_version()
    assert after.derived is not before.derived  # rebuilt from the store
    # The next push follows the rebuilt version alone: a delta again.
    assert replica.push("ci-2", "auth").derived is after.derived


def test_a_pushed_deploy_naming_no_entity_is_listed_unresolved_by_the_delta(replica: Replica) -> None:
    before = replica.ref.current()
    assert before is not None
    after = replica.push("ci-9", "nowhere-service")
    assert after.derived is before.derived and deploy_ids(after) == set()
    assert any("nowhere-service" in str(p) for p in after.hygiene.unresolved_deploys)


def test_a_push_joins_while_the_sync_is_still_reading_a_slow_source(store: Store, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", "The auth service depends on the token cache.")
    reading = threading.Event()
    access = SourceAccess(timeout=1.0, limits=ReadLimits(deadline_seconds=2.0))
    with dripping_feed(0.2, reading=reading) as feed:
        one = Replica(store, [SourceSpec("docs", docs), SourceSpec("deploys", feed)], SyncSettings(access=access))
        try:
            one.service.tick()  # the feed fails at its deadline; the docs build the graph
            reading.clear()
            ticking = threading.Thread(target=one.service.tick)
            ticking.start()
            assert reading.wait(timeout=30), "the sync never started reading the feed"
            pushed = one.push("ci-1", "auth")
            # Joined while the sync still waited on the feed: its reads hold no lock a push waits on.
            assert ticking.is_alive() and deploy_ids(pushed) == {"ci-1"}
            ticking.join()
        finally:
            one.intake.close()
    after = one.ref.current()
    assert after is not None and deploy_ids(after) == {"ci-1"}  # the sync's own swap kept it
    assert after.version == store.graph_version()

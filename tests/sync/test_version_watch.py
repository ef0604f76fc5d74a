"""The version watcher on a real database: it hears every move of the graph version, this
process's own included, so a replica that watches takes no second follower of its pushes."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime

from sync.push import PushIntake
from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store
from sync.version_watch import VersionWatcher

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class Wakes:
    """The `wake` the watcher calls: records the graph version each call finds."""

    def __init__(self, store: Store) -> None:
        self.store, self.seen, self.changed = store, list[int](), threading.Condition()

    def __call__(self) -> None:
        with self.changed:
            self.seen.append(self.store.graph_version())
            self.changed.notify_all()

    def wait_for(self, version: int, timeout: float = 5.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: version in self.seen, timeout)


def test_the_watcher_hears_this_process_s_own_pushes(store: Store) -> None:
    wakes = Wakes(store)
    watcher = VersionWatcher(store, wakes, poll_interval=0.05, gap=0.0)
    assert not watcher.watching
    watcher.start()
    intake = PushIntake(store, lambda: AT, refresh=None)  # the watcher is this replica's only follower
    try:
        assert watcher.watching
        intake.open("deploys")
        event = {"id": "ci-1", "service": "antifraud", "deployed_at": "2026-12-01T11:00:00Z"}
        outcome = intake.accept("deploys", json.dumps(event))
        assert outcome.stored == ("ci-1",) and outcome.version == store.graph_version()
        assert wakes.wait_for(outcome.version), f"no wake at version {outcome.version}: {wakes.seen}"
    finally:
        intake.close()
        watcher.stop()


def test_an_in_memory_database_is_not_watched() -> None:
    engine = make_engine("sqlite://")
    migrate(engine)
    watcher = VersionWatcher(Store(engine), lambda: None)
    watcher.start()
    try:
        assert not watcher.watching  # one process moves it: the push refresh follows instead
    finally:
        watcher.stop()
        engine.dispose()

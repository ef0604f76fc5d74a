"""A replica's background jobs let the answers in progress go first (`graph.background`), within a budget.

Real stores (SQLite file, PostgreSQL), examples/acme's catalog, and the bot's own `AnswerSlots`: an
answer is held open on another thread while a sync, a follow or an image write runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from bot.slack.answer_slots import AnswerSlots
from graph.snapshot import SnapshotRef
from sync.lag import LogNotifier
from sync.leader import EmbeddedLeadership
from sync.refresh import load_snapshot, sync_once
from sync.schedule import SyncService, SyncSettings
from sync.snapshot_images import SnapshotImages
from sync.sources.registry import SourceSpec
from sync.store.fact_store import Store
from sync.store.snapshot_image import image_key, read_image

ACME = Path(__file__).resolve().parents[2] / "examples" / "acme" / "catalog"
T0 = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)
REDIS = "resource:default/redis"
SPECS = [SourceSpec("catalog", str(ACME))]


def clock() -> datetime:
    return T0


@contextmanager
def answering(slots: AnswerSlots) -> Iterator[threading.Event]:
    """An answer in progress on another thread until the event yielded is set (or the block ends)."""
    done, started = threading.Event(), threading.Event()

    def answer() -> None:
        with slots:
            started.set()
            done.wait(30)

    worker = threading.Thread(target=answer, name="answer")
    worker.start()
    assert started.wait(5)
    try:
        yield done
    finally:
        done.set()
        worker.join()


def in_background(job: object) -> threading.Thread:
    thread = threading.Thread(target=job, name="sync-job")  # type: ignore[arg-type]
    thread.start()
    return thread


def leader(store: Store, slots: AnswerSlots, budget: float = 30.0) -> SyncService:
    return SyncService(SPECS, store, SnapshotRef(), clock, EmbeddedLeadership(), LogNotifier(), SyncSettings(),
                       make_way=lambda: slots.make_way(budget))  # fmt: skip


def test_a_sync_rebuilds_only_once_the_answer_in_progress_is_done(store: Store) -> None:
    slots = AnswerSlots(longest_pause=30)
    service = leader(store, slots)
    with answering(slots) as answered:
        job = in_background(service.tick)
        job.join(0.5)
        assert job.is_alive() and service.ref.current() is None  # waiting for the answer
        answered.set()
        job.join(30)
    assert not job.is_alive()
    served = service.ref.current()
    assert served is not None and REDIS in served.entities


def test_a_job_waits_for_answers_no_longer_than_its_budget(store: Store) -> None:
    slots = AnswerSlots(longest_pause=30)
    service = leader(store, slots, budget=0.3)
    with answering(slots):
        job = in_background(service.tick)
        job.join(30)
        assert not job.is_alive() and slots.busy  # synced although the answer still runs
    served = service.ref.current()
    assert served is not None and REDIS in served.entities


def test_a_follower_takes_the_new_version_once_the_answer_is_done(store: Store) -> None:
    slots = AnswerSlots(longest_pause=30)
    sync_once(SPECS, store, SnapshotRef(), clock)
    follower = leader(store, slots)
    with answering(slots) as answered:
        job = in_background(follower.wake)
        job.join(0.5)
        assert job.is_alive() and follower.ref.current() is None
        answered.set()
        job.join(30)
    served = follower.ref.current()
    assert served is not None and served.version == store.graph_version()


def test_an_image_is_written_only_once_the_answer_in_progress_is_done(store: Store, tmp_path: Path) -> None:
    slots = AnswerSlots(longest_pause=30)
    sync_once(SPECS, store, SnapshotRef(), clock)
    snapshot = load_snapshot(store, clock)
    assert snapshot is not None
    path = tmp_path / "snapshot.image"
    images = SnapshotImages(store, path, clock, "the test database", make_way=slots.make_way)
    with answering(slots) as answered:
        images.keep(snapshot, None, snapshot.version)
        images.wait(0.5)
        assert not path.exists()
        answered.set()
        images.wait(30)
    key = image_key(path)
    assert key is not None and read_image(path, key).entities == snapshot.entities

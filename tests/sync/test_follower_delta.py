"""Two replicas on one database (a real SQLite file, a real PostgreSQL server): a deploy pushed to
one, or a polled feed change, reaches the other as a delta read from the store (its entities and
indexes the same objects, only the changed rows read) that answers as a fresh rebuild; a catalog
change, or a mix, rebuilds; a stale image is brought up by the delta since it."""

from __future__ import annotations

import json
import logging
import re
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy

from bot.render.json import blast_json, suspects_json
from graph.snapshot import Snapshot, SnapshotRef
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects
from graph.warm import warm
from sync.deltas import Delta, deploy_delta
from sync.lag import LogNotifier
from sync.leader import EmbeddedLeadership, Leadership
from sync.observer import NoObserver
from sync.push import PushIntake
from sync.refresh import load_snapshot
from sync.schedule import SyncService, SyncSettings
from sync.snapshot_images import SnapshotImages
from sync.sources.registry import SourceSpec
from sync.store.fact_store import Store
from sync.store.snapshot_image import image_key, read_image
from tests.sync.pushes import push_steps
from tests.sync.test_refresh import T0, Clock, write_docs

AUTH, CACHE = "component:default/auth-service", "component:default/token-cache"


class Follower(Leadership):
    """A replica that never leads: its tick only follows."""

    def try_lead(self) -> bool:
        return False

    def release(self) -> None:
        return None


class Recorder(NoObserver):
    """Hears how each snapshot was brought up; everything else as `NoObserver`."""

    def __init__(self) -> None:
        self.hows: list[str] = []

    def snapshot_updated(self, how: str, seconds: float) -> None:
        self.hows.append(how)


def replica(store: Store, specs: list[SourceSpec], clock: Clock, *, leads: bool, images: SnapshotImages | None = None):  # type: ignore[no-untyped-def]
    recorder = Recorder()
    leadership = EmbeddedLeadership() if leads else Follower()
    service = SyncService(specs, store, SnapshotRef(), clock, leadership, LogNotifier(), SyncSettings(),
                          observer=recorder, images=images)  # fmt: skip
    return service, recorder


def feed_line(deploy_id: str, service: str, minutes: int) -> str:
    return json.dumps(
        {"id": deploy_id, "service": service, "deployed_at": (T0 - timedelta(minutes=minutes)).isoformat()}
    )


def answers(snapshot: Snapshot) -> object:
    return (
        dict(snapshot.deploys),
        snapshot.hygiene.unresolved_deploys,
        dict(snapshot.deploy_ids),
        [suspects_json(r, suspects(snapshot, r, now=T0, max_depth=3)) for r in (AUTH, CACHE)],
        [blast_json(r, blast_radius(snapshot, r)) for r in (AUTH, CACHE)],
    )


def current(service: SyncService) -> Snapshot:
    snapshot = service.ref.current()
    assert snapshot is not None
    return snapshot


def rows_read(caplog: pytest.LogCaptureFixture) -> list[int]:
    found = (re.search(r"\((\d+) rows read\)", r.getMessage()) for r in caplog.records)
    return [int(m.group(1)) for m in found if m]


def push(store: Store, clock: Clock, *ids: str) -> None:
    """Each id its own delivery, so its own version step; no replica is refreshed by it."""
    intake = PushIntake(store, clock, refresh=None)
    intake.open("deploys")
    try:
        for deploy_id in ids:
            event = {"id": deploy_id, "service": "token cache", "deployed_at": clock().isoformat()}
            assert intake.accept("deploys", json.dumps(event)).stored == (deploy_id,)
    finally:
        intake.close()


def started_with_image(store: Store, specs: list[SourceSpec], clock: Clock, path: Path):  # type: ignore[no-untyped-def]
    """A replica started with the image at `path` (built from the facts, and written, when it is not
    usable), once its image is written."""
    images = SnapshotImages(store, path, clock, "the test database")
    service, seen = replica(store, specs, clock, leads=False, images=images)
    service.load()
    images.wait()
    return service, seen


@pytest.fixture
def setup(store: Store, tmp_path: Path):  # type: ignore[no-untyped-def]
    docs = write_docs(tmp_path / "docs", "The auth service depends on the token cache.")
    feed = tmp_path / "deploys.jsonl"
    feed.write_text("\n".join(feed_line(f"old-{n}", "auth", 100 + n) for n in range(40)) + "\n")
    specs = [SourceSpec("docs", docs), SourceSpec("deploys", str(feed))]
    clock = Clock()
    leader, _ = replica(store, specs, clock, leads=True)
    leader.tick()
    follower, seen = replica(store, specs, clock, leads=False)
    follower.load()
    return leader, follower, seen, feed, tmp_path / "docs", specs, clock


def test_a_push_on_one_replica_reaches_the_other_as_a_delta_answering_as_a_rebuild(
    setup, store: Store, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    _, follower, seen, _, _, specs, clock = setup
    before = current(follower)
    push(store, clock, "ci-1")
    caplog.set_level(logging.INFO, logger="sync.schedule")
    follower.tick()
    after = current(follower)
    assert after.entities is before.entities and after.derived is before.derived  # nothing rebuilt
    assert after.version == store.graph_version() == before.version + 1 and seen.hows[-1] == "delta"
    assert rows_read(caplog) == [1]  # the pushed row, not the 40 feed rows and the catalog
    fresh = load_snapshot(store, clock, [s.name for s in specs])
    assert fresh is not None and answers(after) == answers(fresh) and "ci-1" in fresh.deploy_ids


def test_a_delta_is_read_through_one_connection(setup, store: Store) -> None:  # type: ignore[no-untyped-def]
    _, follower, _, _, _, specs, clock = setup
    push(store, clock, "ci-2")
    checkouts: list[object] = []
    listener = lambda *_: checkouts.append(1)  # noqa: E731
    sqlalchemy.event.listen(store.engine, "checkout", listener)
    try:
        # Under pushes a follower takes a delta ten times a second; each checkout is a ping and a rollback.
        delta = deploy_delta(store, current(follower), store.graph_version(), [s.name for s in specs], clock)
    finally:
        sqlalchemy.event.remove(store.engine, "checkout", listener)
    assert isinstance(delta, Delta) and delta.added == 1 and "ci-2" in delta.snapshot.deploy_ids
    assert len(checkouts) == 2  # the version read above, and the delta's steps, rows and source states


def test_a_polled_feed_change_is_a_delta_on_every_replica_and_a_retired_deploy_leaves_both(
    setup, store: Store, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    leader, follower, seen, feed, _, specs, clock = setup
    before_leader, before = current(leader), current(follower)
    lines = feed.read_text().splitlines()
    # The last line replaced (the lines before it keep their numbers, so their citations and rows).
    feed.write_text("\n".join([*lines[:-1], feed_line("new-1", "token cache", 1)]) + "\n")
    caplog.set_level(logging.INFO, logger="sync.schedule")
    report = leader.tick()
    assert report is not None and report.update is not None and report.update.how == "delta"
    assert current(leader).derived is before_leader.derived
    follower.tick()
    after = current(follower)
    assert after.derived is before.derived and seen.hows[-1] == "delta"
    assert rows_read(caplog)[-1] == 2  # old-39 retired, new-1 added: not the 39 others
    fresh = load_snapshot(store, clock, [s.name for s in specs])
    assert fresh is not None
    for snapshot in (current(leader), after):
        assert answers(snapshot) == answers(fresh)
        assert "old-39" not in snapshot.deploy_ids and "new-1" in snapshot.deploy_ids


def test_a_catalog_change_or_a_mix_with_deploys_rebuilds(setup, store: Store) -> None:  # type: ignore[no-untyped-def]
    leader, follower, seen, feed, docs, specs, clock = setup
    (docs / "users.md").write_text("The auth service depends on the user db.")
    leader.tick()
    before = current(follower)
    follower.tick()
    assert current(follower).derived is not before.derived and seen.hows[-1] == "rebuild"
    # A deploy step and a catalog step together: the follower rebuilds, as it must.
    with feed.open("a") as file:
        file.write(feed_line("new-2", "auth", 2) + "\n")
    leader.tick()
    (docs / "users.md").unlink()
    leader.tick()
    before = current(follower)
    follower.tick()
    after = current(follower)
    assert after.derived is not before.derived and seen.hows[-1] == "rebuild"
    fresh = load_snapshot(store, clock, [s.name for s in specs])
    assert fresh is not None and answers(after) == answers(fresh) and "new-2" in after.deploy_ids


def test_a_stale_image_is_brought_up_by_the_deploy_delta_since_it(
    setup, store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    leader, _, _, feed, docs, specs, clock = setup
    path = tmp_path / "graph.snapshot"
    started_with_image(store, specs, clock, path)  # no image yet: built from the facts, and an image written
    assert path.exists()
    with feed.open("a") as file:
        file.write(feed_line("new-3", "token cache", 3) + "\n")
    leader.tick()
    caplog.set_level(logging.INFO)
    restarted, seen = started_with_image(store, specs, clock, path)
    assert seen.hows == ["image"] and any("and a delta" in r.getMessage() for r in caplog.records)
    fresh = load_snapshot(store, clock, [s.name for s in specs])
    assert fresh is not None and answers(current(restarted)) == answers(fresh) and "new-3" in fresh.deploy_ids
    assert current(restarted).version == store.graph_version()
    # After a catalog step the old image is not brought up: rebuilt.
    (docs / "users.md").write_text("The auth service depends on the user db.")
    leader.tick()
    _, seen = started_with_image(store, specs, clock, path)  # its new image written before the database goes
    assert seen.hows == ["rebuild"]


def test_an_image_of_a_version_the_pushes_moved_past_is_still_written_and_brought_up(
    setup, store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    # Under pushes the version moves within milliseconds of a build: its image, keyed by when the
    # graph moved to its version, is written anyway and a start takes the deploy delta since.
    _, _, _, _, _, specs, clock = setup
    names = [s.name for s in specs]
    built = load_snapshot(store, clock, names)
    assert built is not None
    push(store, clock, "ci-9")
    path = tmp_path / "graph.snapshot"
    images = SnapshotImages(store, path, clock, "the test database")
    images.keep(built, names, built.version)
    images.wait()
    assert (image_key(path) or {}).get("graph_version") == built.version == store.graph_version() - 1
    caplog.set_level(logging.INFO)
    restarted, seen = started_with_image(store, specs, clock, path)
    assert seen.hows == ["image"] and any("and a delta" in r.getMessage() for r in caplog.records)
    assert "ci-9" in current(restarted).deploy_ids and current(restarted).version == store.graph_version()


def test_an_image_more_than_a_thousand_pushes_behind_is_still_brought_up_by_its_delta(
    setup, store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    # A graph stepped only by pushes keeps its last build's image: a restart a busy day later must
    # not rebuild (9.7 s at 100k) because the steps' ids no longer fit a list of literals.
    _, _, _, _, _, specs, clock = setup
    path = tmp_path / "graph.snapshot"
    started_with_image(store, specs, clock, path)
    pushed = [f"busy-{n}" for n in range(1_200)]
    push_steps(store, clock, ({"id": i, "service": "token cache", "deployed_at": clock().isoformat()} for i in pushed))
    caplog.set_level(logging.INFO)
    restarted, seen = started_with_image(store, specs, clock, path)
    assert seen.hows == ["image"]
    assert any(
        "1200 deploys added, 0 retired over 1200 steps (1200 rows read)" in r.getMessage() for r in caplog.records
    )
    fresh = load_snapshot(store, clock, [s.name for s in specs])
    assert fresh is not None and answers(current(restarted)) == answers(fresh)
    assert set(pushed) <= set(current(restarted).deploy_ids)


def warmed_indexes(store: Store, clock: Clock) -> set[str]:
    """The keys of every index `graph.warm` builds, on the stored graph."""
    snapshot = load_snapshot(store, clock)
    assert snapshot is not None
    warm(snapshot)
    return set(snapshot.derived)


def test_the_image_a_start_writes_holds_every_index_an_answer_uses(setup, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    *_, specs, clock = setup
    path = tmp_path / "snapshot.image"
    started_with_image(store, specs, clock, path)  # no image yet: built, served, then written
    image = read_image(path, image_key(path) or {})
    assert set(image.derived) == warmed_indexes(store, clock)


def test_an_image_kept_by_a_process_that_never_serves_holds_them_too(setup, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The command line answers from `SnapshotImages.load` without a swap: the writer warms it."""
    *_, clock = setup
    path = tmp_path / "snapshot.image"
    images = SnapshotImages(store, path, clock, "the test database")
    assert images.load(None) is not None
    images.wait()
    image = read_image(path, image_key(path) or {})
    assert set(image.derived) == warmed_indexes(store, clock)


def test_the_leaders_sync_writes_an_image_after_a_rebuild_only(setup, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A write contends for the GIL for seconds at 100k: after a delta or an unchanged tick it would
    slow the leader's answers every sync interval while pushes arrive. A start brings the
    older image up by the delta instead."""
    *_, docs, specs, clock = setup
    path = tmp_path / "snapshot.image"
    images = SnapshotImages(store, path, clock, "the test database")
    leader, seen = replica(store, specs, clock, leads=True, images=images)
    leader.load()
    images.wait()
    written = (image_key(path) or {})["graph_version"]
    push(store, clock, "ci-1", "ci-2")
    leader.tick()  # no source changed
    images.wait()
    assert current(leader).version == store.graph_version() == written + 2
    assert (image_key(path) or {})["graph_version"] == written
    write_docs(Path(docs), "The auth service depends on the token cache and the session store.")
    leader.tick()
    images.wait()
    assert seen.hows[-1] == "rebuild"
    assert (image_key(path) or {})["graph_version"] == store.graph_version() == current(leader).version

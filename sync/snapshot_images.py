"""Snapshot images: a start loads the image of the stored graph when it is valid, else builds from
the facts and writes a new image in the background (one process at a time, off the answering path).

An image is keyed by the database, the graph version and when it moved, the configured sources and
the code (`code_version`); anything else, or a broken file, is rebuilt from the facts and the reason
logged. An image of an older version of this same graph (the store's record of that version's step
has the moment in its key) is loaded and brought up by the deploy delta since, when every step
since changed deploys alone; else rebuilt. Source marks are never taken from the image: they move
without the graph, so a loaded image gets the stored ones.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy

import graph
from graph.background import Step, paced
from graph.facts import SourceMark
from graph.snapshot import Snapshot
from graph.warm import warm
from sync.deltas import IMAGE, REBUILD, Update, joined_delta
from sync.refresh import Clock, load_snapshot
from sync.store.database import HEAD
from sync.store.fact_store import Store, in_graph, source_marks
from sync.store.snapshot_image import (
    FORMAT,
    ImageRejected,
    graph_moment,
    holds,
    image_key,
    read_image,
    stale_temporaries,
    write_image,
    write_lock,
)

log = logging.getLogger(__name__)


@functools.cache
def code_version() -> str:
    """A digest of what a pickled snapshot depends on: the graph's code, Python, numpy, the schema."""
    digest = hashlib.sha256(f"{FORMAT} {sys.version} numpy {numpy.__version__} schema {HEAD}".encode())
    root = Path(graph.__file__).parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class SnapshotImages:
    """The image of one database's graph at `path`; `load` at start, `keep` after every build."""

    def __init__(
        self, store: Store, path: Path, clock: Clock, database: str, make_way: Callable[[], Step] | None = None
    ) -> None:
        self.store, self.path, self.clock = store, path, clock
        self.make_way = make_way  # a step for each write, letting answers go first (`graph.background`)
        self.database = hashlib.sha256(database.encode()).hexdigest()[:16]
        self._pending: tuple[Snapshot, tuple[str, ...], int] | None = None
        self._lock = threading.Lock()
        self._writer: threading.Thread | None = None
        self._kept: dict[str, Any] | None = None  # the key last written or found sound by this process

    def key(self, names: Sequence[str] | None, version: int, moved: str) -> dict[str, Any]:
        return {"database": self.database, "graph_version": version, "graph_moved": moved,
                "sources": sorted(names or ()), "code": code_version()}  # fmt: skip

    def load(self, names: Sequence[str] | None) -> Snapshot | None:
        """The stored graph: from its image when valid, else from the facts (then an image is written)."""
        update = self.load_update(names)
        if update.how == REBUILD and update.snapshot is not None:
            self.keep(update.snapshot, names, update.snapshot.version)
        return update.snapshot

    def load_update(self, names: Sequence[str] | None) -> Update:
        """As `load`, saying how: the image (brought up by a deploy delta when older), or a rebuild,
        which the caller keeps once it serves it (`keep`): warmed by then, its image is written
        without building its indexes a second time beside the swap."""
        version, moved = graph_moment(self.store.engine)
        began = time.perf_counter()
        try:
            snapshot = read_image(self.path, self.key(names, version, moved))
        except ImageRejected as reason:
            if (older := self._older(names, version)) is not None:
                return older
            log.warning("snapshot image %s not used (%s): building graph version %s from the facts",
                        self.path, reason, version)  # fmt: skip
        else:
            log.info("loaded graph version %s from its image %s in %.2f s", version, self.path,
                     time.perf_counter() - began)  # fmt: skip
            fresh = snapshot.with_marks(self._marks(names), calls=self.store.load_calls(names or None))
            return Update(fresh, IMAGE, time.perf_counter() - began)
        built = load_snapshot(self.store, self.clock, names)
        return Update(built, REBUILD, time.perf_counter() - began, "no usable image")

    def _older(self, names: Sequence[str] | None, version: int) -> Update | None:
        """The image of an older version of this graph, brought to `version` by the deploy delta since;
        None (the reason logged) when there is none or a step since changed more than deploys."""
        began = time.perf_counter()
        found = image_key(self.path)
        if found is None or not isinstance(then := found.get("graph_version"), int) or then >= version:
            return None
        expected = self.key(names, then, self.store.step_moment(then) or "")
        if found != expected or not expected["graph_moved"]:
            return None  # another database, other sources or code, or a version this database never recorded
        # Read once, before the image: a step since that changed more than deploys spares reading it.
        changed, states = self.store.deploy_changes(then, version)
        if isinstance(changed, str):
            log.info("snapshot image %s of graph version %s not brought up: %s", self.path, then, changed)
            return None
        try:
            snapshot = read_image(self.path, expected)
        except ImageRejected as reason:
            log.warning("snapshot image %s not used (%s)", self.path, reason)
            return None
        if snapshot.version != then:
            log.warning(
                "snapshot image %s holds graph version %s, keyed %s: not used", self.path, snapshot.version, then
            )
            return None
        delta = joined_delta(snapshot, changed, states, version, names, self.clock)
        if isinstance(delta, str):
            log.info("snapshot image %s of graph version %s not brought up: %s", self.path, then, delta)
            return None
        log.info("loaded graph version %s from the image of version %s %s and a delta in %.2f s", version, then,
                 self.path, time.perf_counter() - began)  # fmt: skip
        return Update(
            delta.snapshot, IMAGE, time.perf_counter() - began, f"an image of version {then}, {delta.summary}"
        )

    def _marks(self, names: Sequence[str] | None) -> dict[str, SourceMark]:
        states = self.store.source_states()
        wanted = in_graph(names, states)
        return source_marks(s for s in states.values() if not names or s.name in wanted)

    def keep(self, snapshot: Snapshot, names: Sequence[str] | None, version: int) -> None:
        """Write `snapshot` as the image of `version` in the background (its facts were read after
        `version` was): only the latest one waiting is written."""
        with self._lock:
            self._pending = (snapshot, tuple(names or ()), version)
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._write_pending, name="snapshot-image", daemon=True)
                self._writer.start()

    def wait(self, timeout: float | None = None) -> None:
        """Until the image waiting (if any) is written: for a short-lived process before it exits."""
        writer = self._writer
        if writer is not None:
            writer.join(timeout)

    def _write_pending(self) -> None:
        while True:
            with self._lock:
                pending, self._pending = self._pending, None
                if pending is None:
                    return
            try:
                with paced(self.make_way() if self.make_way is not None else None):
                    self._write(*pending)
            except Exception:  # an image is an optimisation: a failed write never stops serving
                log.exception("snapshot image %s not written", self.path)

    def _write(self, snapshot: Snapshot, names: tuple[str, ...], version: int) -> None:
        with write_lock(self.path) as mine:
            if not mine:
                log.info("snapshot image %s is being written by another process", self.path)
                return
            now, moved = graph_moment(self.store.engine)
            if now != version:
                # The graph moved on meanwhile (under pushes, within milliseconds): keyed by when it
                # moved to `version`, a start brings the image up by the deploy delta since.
                moved = self.store.step_moment(version) or ""
                if not moved:
                    return  # a version this database has no record of: a start could never trust it
            key = self.key(names, version, moved)
            if key == self._kept or holds(self.path, key):
                self._kept = key
                return  # written already, by this process or another replica
            for leftover in stale_temporaries(self.path):
                leftover.unlink(missing_ok=True)  # a writer killed mid-write; we hold the lock, so none is live
            began = time.perf_counter()
            # Every index an answer uses goes into the image, whoever kept it (a served snapshot is
            # warmed already): a start from it builds none, and the first pushed deploy after it
            # does not read every entity to place it.
            warm(snapshot)
            write_image(self.path, key, snapshot)
            self._kept = key
            log.info("wrote the image of graph version %s to %s in %.2f s", version, self.path,
                     time.perf_counter() - began)  # fmt: skip

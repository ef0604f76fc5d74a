"""A replaced snapshot is freed by reference counting alone: `SnapshotRef.swap` freezes the graph
out of the cycle collector's passes, which is only safe while snapshots hold no reference cycles."""

from __future__ import annotations

import gc
import weakref
from datetime import UTC, datetime

from graph.ask import ask
from graph.blast import blast_radius
from graph.snapshot import SnapshotRef
from graph.suspects import suspects
from tests.graph.shop import c, shop


def test_a_replaced_snapshot_is_freed_without_the_cycle_collector() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        ref = SnapshotRef()
        first = shop()
        ref.swap(first)
        # Everything an answer caches on the snapshot or beside it, in use before the swap.
        assert blast_radius(first, c("postgres")).impacted
        suspects(first, c("checkout"), now=datetime(2026, 1, 1, tzinfo=UTC))
        ask(first, "what breaks if postgres goes down?", now=datetime(2026, 1, 1, tzinfo=UTC))
        first.graph  # noqa: B018 (computed and cached on the snapshot)
        freed = weakref.ref(first)
        walk_index = weakref.ref(first.walk_index)
        del first
        ref.swap(shop())
        assert freed() is None
        assert walk_index() is None
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()

"""A replaced snapshot is freed by reference counting alone: the entry points freeze each graph
they swap in out of the cycle collector's passes (`bot.wiring.prepare_to_serve`), which is only
safe while snapshots, and the indexes derived from them, hold no reference cycles."""

from __future__ import annotations

import gc
import weakref
from datetime import UTC, datetime

from bot.wiring import snapshot_ref
from graph.blast import blast_radius
from graph.compiled import walk_index
from graph.networkx_view import networkx_view
from graph.questions.ask import ask
from graph.suspects import suspects
from tests.graph.shop import c, shop


def test_a_replaced_snapshot_is_freed_without_the_cycle_collector() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        ref = snapshot_ref()
        first = shop()
        ref.swap(first)
        # Everything an answer caches on the snapshot or beside it, in use before the swap.
        assert blast_radius(first, c("postgres")).impacted
        suspects(first, c("checkout"), now=datetime(2026, 1, 1, tzinfo=UTC))
        ask(first, "what breaks if postgres goes down?", now=datetime(2026, 1, 1, tzinfo=UTC))
        networkx_view(first)
        assert gc.get_freeze_count() > 0
        freed = weakref.ref(first)
        index = weakref.ref(walk_index(first))
        del first
        ref.swap(shop())
        assert freed() is None
        assert index() is None
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()

"""A replaced snapshot is freed by reference counting alone: the entry points freeze each graph
they swap in out of the cycle collector's passes (`bot.wiring.snapshot_ref`), which is only
safe while snapshots, and the indexes derived from them, hold no reference cycles."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from bot.wiring import snapshot_ref
from graph.deploys.deploy_delta import with_deploys
from graph.questions.ask import ask
from graph.walks.blast import blast_radius
from graph.walks.compiled import walk_index
from graph.walks.networkx_view import networkx_view
from graph.walks.suspects import suspects
from tests.graph.builders import deploy
from tests.graph.shop import c, shop


@pytest.fixture
def collector_off() -> Iterator[None]:
    """No collector pass but the test's own; every freeze undone afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


@pytest.mark.usefixtures("collector_off")
def test_a_replaced_snapshot_is_freed_without_the_cycle_collector() -> None:
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


class Cycle:
    """Garbage only the cycle collector frees: it refers to itself."""

    def __init__(self) -> None:
        self.me = self


@pytest.mark.usefixtures("collector_off")
def test_a_deploy_delta_swapped_in_freezes_nothing_new_so_cycles_alive_then_are_still_collected() -> None:
    ref = snapshot_ref()
    first = shop()
    ref.swap(first)  # a new graph: frozen
    alive_at_the_delta = Cycle()  # e.g. a request's objects, in flight when a push's delta swaps in
    later = with_deploys(first, added=[deploy("d-1", "checkout", "2026-01-01T00:00:00Z")],
                         built_at=datetime(2026, 1, 1, tzinfo=UTC))  # fmt: skip
    assert later is not None and later.entities is first.entities
    ref.swap(later)
    gone = weakref.ref(alive_at_the_delta)
    del alive_at_the_delta
    gc.collect()
    assert gone() is None

"""Steps at which long background work lets answers go first.

A replica's answers and its background work (a rebuild, its indexes, an image write) share one
GIL. A thread that wants the GIL gets it only after the switch interval, and an answer's walk lets
it go in every large numpy call, so each of those waits out the background's turn: beside a
rebuild at 100k, an answer that takes 8 ms alone took up to 1 s. Long loops therefore pass a
step every few hundred items (`stepping`), and the thread doing background work says what a step
does (`paced`): typically, wait while an answer runs. Anywhere else a step does nothing.

Steps are per thread (a context variable), so an answer building an index on its own thread never
waits for itself. A step may block: the one loop that steps under a lock (the alias index's looser
tiers) runs there on a graph no answer reads yet, a build warmed before its swap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")
Step = Callable[[], None]
EVERY = 256  # items between steps: well under a millisecond of the loops that use it

_STEP: ContextVar[Step | None] = ContextVar("graph_background_step", default=None)


@contextmanager
def paced(step: Step | None) -> Iterator[None]:
    """Within this block, on this thread, loops that step call `step` (None: they never pause)."""
    token = _STEP.set(step)
    try:
        yield
    finally:
        _STEP.reset(token)


def step() -> None:
    """One step of this thread's background work, between two pieces of it."""
    if (current := _STEP.get()) is not None:
        current()


def stepping(items: Iterable[T], every: int = EVERY) -> Iterator[T]:
    """`items`, with a step before every `every`-th of them (and none at all off a paced thread)."""
    current = _STEP.get()
    if current is None:
        # The items' own iterator: a generator in between cost 60 ns an item, 0.5 s of a cold load
        # at 100k (bench dense-100k: the build and the walk index pass nine million items).
        return iter(items)
    return _stepped(items, current, every)


def _stepped(items: Iterable[T], current: Step, every: int) -> Iterator[T]:
    for count, item in enumerate(items):
        if not count % every:
            current()
        yield item

"""At most one start per gap: a burst of triggers (version moves heard, pushes stored, deliveries
queued) is taken by one snapshot update or one write, not one per event, each of which costs a
delta on every replica or a transaction."""

from __future__ import annotations

import time
from collections.abc import Callable

FOLLOW_GAP = 0.1  # seconds: at most ten snapshot updates a second per trigger; a deploy waits no longer


class Pace:
    """`wait()` before each start: the first goes at once; one sooner than `gap` after the last
    start waits out the rest of the gap, so what piles up meanwhile is taken by that start.
    For one thread at a time."""

    def __init__(
        self,
        gap: float = FOLLOW_GAP,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self._gap, self._clock, self._sleep = gap, clock, sleep
        self._last: float | None = None

    def wait(self) -> None:
        """Wait out the rest of the gap since the last start (nothing when it is over); a start now."""
        if self._last is not None:
            rest = self._last + self._gap - self._clock()
            if rest > 0:
                self._sleep(rest)
        self._last = self._clock()

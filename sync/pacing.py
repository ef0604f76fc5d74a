"""At most one call per gap: a burst of triggers (version moves heard, pushes stored) is taken as
one snapshot update, not one per version step, each of which costs a delta on every replica."""

from __future__ import annotations

import time
from collections.abc import Callable

FOLLOW_GAP = 0.1  # seconds: at most ten snapshot updates a second per trigger; a deploy waits no longer


class Paced:
    """Calls `call`; a call sooner than `gap` after the last one began first waits out the rest of
    the gap, so what piles up meanwhile is taken by that one call. For one thread's use."""

    def __init__(
        self,
        call: Callable[[], None],
        gap: float = FOLLOW_GAP,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self._call, self._gap, self._clock, self._sleep = call, gap, clock, sleep
        self._last: float | None = None

    def wait_turn(self) -> None:
        """Wait out the rest of the gap since the last call began (nothing when it is over)."""
        if self._last is not None:
            rest = self._last + self._gap - self._clock()
            if rest > 0:
                self._sleep(rest)

    def __call__(self) -> None:
        self.wait_turn()
        self._last = self._clock()
        self._call()

"""Pacing: a burst of triggers is taken by one call a gap, the first at once."""

from __future__ import annotations

import time

from sync.pacing import Pace
from sync.push import RefreshWorker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_the_first_start_goes_at_once_and_a_sooner_one_waits_out_the_rest_of_the_gap() -> None:
    clock, starts = Clock(), []
    pace = Pace(0.1, clock=clock, sleep=clock.sleep)
    for quiet in (0.0, 0.03, 0.5):  # the last after a quiet spell: due at once
        clock.now += quiet
        pace.wait()
        starts.append(clock.now)
    assert starts == [100.0, 100.1, 100.6]
    assert clock.slept == [0.07]


def test_pushes_stored_within_the_gap_after_a_refresh_began_are_taken_by_one_more_refresh() -> None:
    began: list[float] = []
    worker = RefreshWorker(lambda: began.append(time.monotonic()), gap=0.5)
    try:
        worker.poke()
        while not began:
            time.sleep(0.01)
        for _ in range(5):  # a burst of stored pushes, each its own version step, within the gap
            worker.poke()
            time.sleep(0.05)
        time.sleep(1.0)  # the gap is over and the folded refresh done; another would be a third
        assert len(began) == 2
        assert began[1] - began[0] >= 0.5
    finally:
        worker.close()

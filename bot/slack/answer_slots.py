"""How many answers compute at once, and a way for background work to let them go first."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from bot.telemetry.tracing import stage_span
from graph.background import Step

ANSWER_SLOTS = 2  # the machine's cores
LONGEST_PAUSE = 1.0  # seconds background work waits for answers at one step, so it always moves on
JOB_BUDGET = 10.0  # seconds a sync job (a rebuild, an image write) waits for answers in all


class AnswerSlots:
    """A context manager around an answer's CPU work: a few at a time, and counted while waiting.

    Walking and formatting run under one GIL: a few at a time keeps the cheap acks of a burst of
    commands prompt (bench: with 50 running at once, acks neared Slack's 3 s limit). Background
    work (attachments, and the sync's jobs through `make_way`) calls `step_aside` between small
    steps, so it runs in the gaps between answers instead of slowing the answer being computed.
    """

    def __init__(self, slots: int = ANSWER_SLOTS, *, longest_pause: float = LONGEST_PAUSE) -> None:
        self._slots = threading.BoundedSemaphore(slots)
        self._answering = 0  # running or waiting for a slot
        self._quiet = threading.Condition()
        self.longest_pause = longest_pause

    def __enter__(self) -> None:
        with self._quiet:
            self._answering += 1
        with stage_span("slot"):
            self._slots.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._slots.release()
        self._done()

    @contextmanager
    def arriving(self) -> Iterator[None]:
        """Counted as an answer, without a slot: a request being received, verified and acknowledged.

        Without it a command's first 10-60 ms (reading, signature, ack) ran beside a full text being
        written, waiting for the GIL at every step (bench, 100k hub)."""
        with self._quiet:
            self._answering += 1
        try:
            yield
        finally:
            self._done()

    def _done(self) -> None:
        with self._quiet:
            self._answering -= 1
            if not self._answering:
                self._quiet.notify_all()

    @property
    def busy(self) -> bool:
        return self._answering > 0

    def step_aside(self, longest: float | None = None) -> None:
        """Wait until no answer runs or waits, for at most `longest` seconds (default `longest_pause`)."""
        wait = self.longest_pause if longest is None else min(longest, self.longest_pause)
        with self._quiet:
            self._quiet.wait_for(lambda: self._answering == 0, timeout=max(wait, 0.0))

    def make_way(self, budget: float = JOB_BUDGET) -> Step:
        """The step of one background job (`graph.background.paced`): while answers run or wait, wait
        for them, for at most `budget` seconds over the whole job, so a busy replica still syncs."""
        deadline = time.monotonic() + budget

        def step() -> None:
            if self._answering and (left := deadline - time.monotonic()) > 0:
                self.step_aside(left)

        return step

"""Group commit: writes that arrive while one is being stored are stored together, next, in one
transaction. A burst of pushed deploys costs one transaction per burst, not one per event, while
each caller still waits for, and gets, its own answer.

No thread of its own: whichever caller finds the writer free writes everything queued, its own
item among them; a caller whose item another's write took returns when that write ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Generic, TypeVar

from sync.pacing import Pace

Item = TypeVar("Item")
Result = TypeVar("Result")
MAX_BATCH = 500  # items per transaction: a long queue is written in several
# Seconds from one write's start to the next's: in a burst, what arrives meanwhile is written
# together (100 a second: about five a transaction, not one); a lone item is written at once.
WRITE_GAP = 0.05


class GroupCommit(Generic[Item, Result]):
    """`submit` blocks until its item is stored; `write` stores a batch, one result per item, in order."""

    def __init__(
        self, write: Callable[[Sequence[Item]], list[Result]], *, max_batch: int = MAX_BATCH, gap: float = WRITE_GAP
    ) -> None:
        self._write, self._max_batch, self._pace = write, max_batch, Pace(gap)
        self._queued: list[tuple[Item, Future[Result]]] = []
        self._turn = threading.Condition()  # guards the queue and `_writing`; told when a write ends
        self._writing = False

    def submit(self, item: Item) -> Result:
        done: Future[Result] = Future()
        with self._turn:
            self._queued.append((item, done))
        while True:
            with self._turn:
                # A caller whose item another's write took returns as soon as that write ends: it
                # never waits for, or makes, a write of later items (a convoy of batches of one).
                self._turn.wait_for(lambda: done.done() or not self._writing)
                if done.done():
                    return done.result()
                self._writing = True
            try:
                self._pace.wait()  # this caller has the turn: others' items join its write meanwhile
                with self._turn:
                    batch, self._queued = self._queued[: self._max_batch], self._queued[self._max_batch :]
                self._store(batch)
            finally:
                with self._turn:
                    self._writing = False
                    self._turn.notify_all()

    def waiting(self) -> int:
        """Items queued for the next write."""
        with self._turn:
            return len(self._queued)

    def _store(self, batch: list[tuple[Item, Future[Result]]]) -> None:
        try:
            results = self._write([item for item, _ in batch])
        except Exception as exc:  # noqa: BLE001 - handed to the waiting callers, each gets it raised
            if len(batch) == 1:
                batch[0][1].set_exception(exc)
            else:  # one bad item must not fail the others: each is written alone, failing alone
                for one in batch:
                    self._store([one])
            return
        for (_, done), result in zip(batch, results, strict=True):
            done.set_result(result)

"""Group commit: what arrives while a write is under way is written next, together, and each
caller gets its own result, or its own error."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from sync.group_commit import GroupCommit


class Writes:
    """A write that records each batch; the first one waits for `release`, so others queue behind it,
    and so does each write whose number (from 1) is in `held`, until `released[number]` is set."""

    def __init__(self, held: Sequence[int] = ()) -> None:
        self.batches: list[list[str]] = []
        self.first_started, self.release = threading.Event(), threading.Event()
        self.started = {n: threading.Event() for n in held}
        self.released = {n: threading.Event() for n in held}

    def __call__(self, batch: Sequence[str]) -> list[str]:
        self.batches.append(list(batch))
        number = len(self.batches)
        if number == 1:
            self.first_started.set()
            assert self.release.wait(timeout=30)
        if number in self.started:
            self.started[number].set()
            assert self.released[number].wait(timeout=30)
        if "bad" in batch:
            raise ValueError("bad item")
        return [item.upper() for item in batch]


def behind_a_write(
    commit: GroupCommit[str, str], writes: Writes, pool: ThreadPoolExecutor, items: Sequence[str]
) -> list[Future[str]]:
    """ "a" submitted and held in its write, `items` submitted and all queued behind it, then released."""
    first = pool.submit(commit.submit, "a")
    assert writes.first_started.wait(timeout=30)
    queued = [pool.submit(commit.submit, item) for item in items]
    while commit.waiting() < len(items):
        threading.Event().wait(0.01)
    writes.release.set()
    return [first, *queued]


def test_items_arriving_during_a_write_are_written_together_next() -> None:
    writes = Writes()
    with ThreadPoolExecutor(max_workers=6) as pool:
        submitted = behind_a_write(GroupCommit(writes), writes, pool, "bcde")
        assert [f.result(timeout=30) for f in submitted] == ["A", "B", "C", "D", "E"]
    assert writes.batches[0] == ["a"] and sorted(writes.batches[1]) == ["b", "c", "d", "e"]
    assert len(writes.batches) == 2


def test_a_caller_whose_item_another_wrote_returns_without_waiting_for_a_later_write() -> None:
    # Once "b" and "c" are written together, both callers return at once: neither writes "d",
    # which queued meanwhile, nor waits behind d's write, which is held until they have returned.
    writes = Writes(held=(2, 3))
    commit: GroupCommit[str, str] = GroupCommit(writes)
    with ThreadPoolExecutor(max_workers=4) as pool:
        first, b, c = behind_a_write(commit, writes, pool, "bc")
        assert writes.started[2].wait(timeout=30)
        d = pool.submit(commit.submit, "d")
        while commit.waiting() < 1:
            threading.Event().wait(0.01)
        writes.released[2].set()
        assert writes.started[3].wait(timeout=30)
        try:
            assert [f.result(timeout=10) for f in (first, b, c)] == ["A", "B", "C"]
        finally:
            writes.released[3].set()
        assert d.result(timeout=30) == "D"
    # b and c queued together, in whichever order their threads got there
    assert [writes.batches[0], sorted(writes.batches[1]), *writes.batches[2:]] == [["a"], ["b", "c"], ["d"]]


def test_items_arriving_within_the_gap_after_a_write_began_are_written_together() -> None:
    writes = Writes()
    writes.release.set()  # nothing held: only the gap groups them
    commit: GroupCommit[str, str] = GroupCommit(writes, gap=0.5)
    with ThreadPoolExecutor(max_workers=3) as pool:
        assert commit.submit("a") == "A"  # the first goes at once
        later = []
        for item in "bc":  # one after another, each well after the last write ended
            later.append(pool.submit(commit.submit, item))
            time.sleep(0.1)
        assert [f.result(timeout=30) for f in later] == ["B", "C"]
    assert writes.batches == [["a"], ["b", "c"]]


def test_a_failing_item_fails_alone_and_the_rest_of_its_batch_is_written() -> None:
    writes = Writes()
    with ThreadPoolExecutor(max_workers=4) as pool:
        first, b, bad, c = behind_a_write(GroupCommit(writes), writes, pool, ("b", "bad", "c"))
        assert [f.result(timeout=30) for f in (first, b, c)] == ["A", "B", "C"]
        with pytest.raises(ValueError, match="bad item"):
            bad.result(timeout=30)
    assert sorted(writes.batches[1]) == ["b", "bad", "c"]  # tried together first, then one by one
    assert sorted(map(tuple, writes.batches[2:])) == [("b",), ("bad",), ("c",)]


def test_a_long_queue_is_written_in_batches_of_at_most_max_batch() -> None:
    writes = Writes()
    with ThreadPoolExecutor(max_workers=6) as pool:
        submitted = behind_a_write(GroupCommit(writes, max_batch=2), writes, pool, "bcde")
        assert [f.result(timeout=30) for f in submitted] == ["A", "B", "C", "D", "E"]
    assert [len(b) for b in writes.batches] == [1, 2, 2]

"""Once-only answers that still arrive, as the handlers see it: take an answer's keys, answer, settle.

The keys live where every replica sees them (`sync/store/deliveries.py`, wired in `bot/main.py`). A
key is refused while another attempt holds it or once its answer was delivered; an answer that
could not be posted is settled as failed, so Slack's next retry of the event (or a replayed
command) takes the key again and answers.

A slash command takes its key beside its answer (`claim_beside`): the claim's write runs on a
thread of its own while the answer is computed, and decides whether the computed message is posted.
An attempt that loses it discards its work and posts nothing, so the answer is still shown once; the
claim costs the answer only what of its write the computing did not cover.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from bot.slack.retrying import PostFailed
from bot.telemetry.tracing import stage_span


@dataclass(frozen=True)
class Claims:
    take: Callable[[str], bool]  # True when this caller is to answer the key, on any replica
    settle: Callable[[str, bool], None]  # (key, delivered): how the answer went


@dataclass(frozen=True)
class Taken:
    claims: Claims
    keys: tuple[str, ...]

    def settle(self, *, delivered: bool) -> None:
        with stage_span("settlement"):
            for key in self.keys:
                self.claims.settle(key, delivered)


def take_all(claims: Claims, keys: Sequence[str]) -> tuple[Taken | None, str]:
    """(all of `keys`, "") taken in order, or (None, the key refused): on a refusal the keys already
    taken are given back as failed (this attempt answers nothing), and the caller counts why by
    the refused key."""
    with stage_span("claim"):
        return _take_all(claims, keys)


def _take_all(claims: Claims, keys: Sequence[str]) -> tuple[Taken | None, str]:
    taken: list[str] = []
    for key in keys:
        if not claims.take(key):
            Taken(claims, tuple(taken)).settle(delivered=False)
            return None, key
        taken.append(key)
    return Taken(claims, tuple(taken)), ""


# Claims being taken beside their answers. On SQLite a replica's writes queue on its own lock anyway
# (sync/store/deliveries.py); on PostgreSQL a few run side by side.
_CLAIMING = ThreadPoolExecutor(max_workers=4, thread_name_prefix="claim")


@dataclass(frozen=True)
class Claiming:
    """Keys being taken on a claim thread (`claim_beside`) while this thread computes the answer."""

    pending: Future[tuple[Taken | None, str]]

    def outcome(self) -> tuple[Taken | None, str]:
        """`take_all`'s outcome, once the claim's write is done; the "claim" stage is the wait for it:
        what of the write the answer's computing did not cover."""
        with stage_span("claim"):
            return self.pending.result()

    def give_back(self) -> None:
        """No answer after all (its computing failed): keys taken are settled failed, to be retaken."""
        if self.pending.exception() is not None:
            return  # the claim's write failed too: nothing taken, the answer's own error is the one raised
        taken, _refused = self.pending.result()
        if taken is not None:
            taken.settle(delivered=False)


def claim_beside(claims: Claims, keys: Sequence[str]) -> Claiming:
    """Start taking `keys` (as `take_all`) on a claim thread, in this request's trace; read the
    outcome before posting anything (`Claiming.outcome`)."""
    return Claiming(_CLAIMING.submit(contextvars.copy_context().run, _take_all, claims, keys))


@contextmanager
def delivering(taken: Taken) -> Iterator[None]:
    """Settle `taken` by how the block went: delivered, or failed. A post that gave up (already
    logged and counted) ends here; any other error is settled failed and raised."""
    try:
        yield
    except PostFailed:
        taken.settle(delivered=False)
        return
    except BaseException:
        taken.settle(delivered=False)
        raise
    taken.settle(delivered=True)

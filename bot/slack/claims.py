"""Once-only answers that still arrive, as the handlers see it: take an answer's keys, answer, settle.

The keys live where every replica sees them (`sync/store/deliveries.py`, wired in `bot/main.py`). A
key is refused while another attempt holds it or once its answer was delivered; an answer that
could not be posted is settled as failed, so Slack's next retry of the event (or a replayed
command) takes the key again and answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
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
    taken: list[str] = []
    with stage_span("claim"):
        for key in keys:
            if not claims.take(key):
                Taken(claims, tuple(taken)).settle(delivered=False)
                return None, key
            taken.append(key)
    return Taken(claims, tuple(taken)), ""


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

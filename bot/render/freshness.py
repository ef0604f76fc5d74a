"""How fresh an answer is: the graph's age and the one stale verdict (`graph.health.freshness.judge`).

Every answer bundle carries one `Freshness`; every front renders it and none judges staleness itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.render.wording import format_age
from graph.facts import SourceMark
from graph.health.freshness import LagReport, SourceLag, StalePolicy, judge
from graph.snapshot import Snapshot

ERROR_CHARS = 300


@dataclass(frozen=True, slots=True)
class Freshness:
    """The graph an answer came from: its size and age, and the sources an answer must warn about."""

    verdict: LagReport
    built_at: datetime
    entities: int
    edges: int
    oldest: SourceMark | None  # the source synced longest ago, the graph's age
    checked_at: datetime  # the wall clock the verdict was judged at

    @property
    def age_seconds(self) -> float | None:
        oldest = self.oldest
        if oldest is None or oldest.last_success is None:
            return None
        # One clock: a source synced a moment after the clock was read is fresh, never from the future.
        return max(0.0, (self.checked_at - oldest.last_success).total_seconds())

    @property
    def warnings(self) -> tuple[str, ...]:
        """One reason per unhealthy source: `deploys:… last synced 4 min ago (limit 2 min)`."""
        return tuple(_reason(lag) for lag in self.verdict.unhealthy)

    @property
    def stale(self) -> bool:
        return bool(self.verdict.unhealthy)

    @property
    def failing(self) -> tuple[str, ...]:
        return tuple(lag.name for lag in self.verdict.sources if lag.last_error)


def freshness_of(snapshot: Snapshot, now: datetime, policy: StalePolicy) -> Freshness:
    """`now` is the wall clock (never `--now`, which moves deploy windows, not the sync marks)."""
    verdict = judge(snapshot.marks.values(), now, policy)
    return Freshness(verdict, snapshot.built_at, len(snapshot.entities), snapshot.edge_count, snapshot.age_mark(), now)


def _reason(lag: SourceLag) -> str:
    parts = []
    if lag.last_success is None:
        parts.append("never synced")
    elif lag.stale and lag.age_seconds is not None and lag.threshold_seconds is not None:
        parts.append(f"last synced {format_age(lag.age_seconds)} ago (limit {format_age(lag.threshold_seconds)})")
    if lag.last_error:
        parts.append(f"last sync failed: {lag.last_error[:ERROR_CHARS]}")
    if lag.held_reason:
        parts.append(f"change held for review: {lag.held_reason[:ERROR_CHARS]}")
    return f"{lag.name} {'; '.join(parts)}"

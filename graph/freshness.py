"""How fresh each source is: age since its last success, and whether that is too old to trust."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from graph.facts import SourceMark

DEFAULT_STALE_INTERVALS = 3


@dataclass(frozen=True, slots=True)
class StalePolicy:
    """When a source is too old to trust: its own limit (ONCALL_GRAPH_STALE_AFTER), else a few sync intervals."""

    interval: float = 300.0  # seconds between syncs
    overrides: Mapping[str, float] = field(default_factory=dict)

    def limit(self, source: str, *, pushed: bool = False) -> float | None:
        """None: never stale by age. A pushed source has no interval, so only its own limit counts
        (quiet services deploy rarely: off unless set)."""
        if pushed:
            return self.overrides.get(source)
        return self.overrides.get(source, DEFAULT_STALE_INTERVALS * self.interval)


@dataclass(frozen=True, slots=True)
class SourceLag:
    name: str
    last_success: datetime | None
    last_error: str
    age_seconds: float | None
    threshold_seconds: float | None  # None: a pushed source without a limit, never stale by age
    stale: bool
    held_reason: str = ""
    pushed: bool = False
    last_refused: str = ""  # a pushed source's last refused delivery, and why
    last_refused_at: datetime | None = None

    @property
    def ok(self) -> bool:
        """Fresh, read without error, and no change of it held for review."""
        return not (self.stale or self.last_error or self.held_reason)


@dataclass(frozen=True, slots=True)
class LagReport:
    sources: tuple[SourceLag, ...]

    @property
    def stale(self) -> bool:
        return any(s.stale for s in self.sources)

    @property
    def unhealthy(self) -> tuple[SourceLag, ...]:
        """The sources an answer must warn about: stale, failing or held."""
        return tuple(s for s in self.sources if not s.ok)


@dataclass(frozen=True, slots=True)
class LagTransition:
    """A source crossed its threshold: `stale` True when it went stale, False when it recovered."""

    source: str
    stale: bool
    at: datetime
    lag: SourceLag


def measure_lag(
    marks: Iterable[SourceMark], now: datetime, *, interval: float, overrides: Mapping[str, float] | None = None
) -> LagReport:
    """Stale when never synced or older than its threshold (default: three sync intervals)."""
    return judge(marks, now, StalePolicy(interval, dict(overrides or {})))


def judge(marks: Iterable[SourceMark], now: datetime, policy: StalePolicy) -> LagReport:
    """The one definition of stale, used by every answer, lag report, metric and alert."""
    lags = []
    for mark in sorted(marks, key=lambda m: m.name):
        threshold = policy.limit(mark.name, pushed=mark.pushed)
        age = max((now - mark.last_success).total_seconds(), 0.0) if mark.last_success else None
        stale = threshold is not None and (age is None or age > threshold)
        lags.append(
            SourceLag(
                mark.name,
                mark.last_success,
                mark.last_error,
                age,
                threshold,
                stale,
                mark.held_reason,
                mark.pushed,
                mark.last_refused,
                mark.last_refused_at,
            )  # fmt: skip
        )
    return LagReport(tuple(lags))

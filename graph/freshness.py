"""How fresh each source is: age since its last success, and whether that is too old to trust."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from graph.facts import SourceMark

DEFAULT_STALE_INTERVALS = 3


@dataclass(frozen=True, slots=True)
class SourceLag:
    name: str
    last_success: datetime | None
    last_error: str
    age_seconds: float | None
    threshold_seconds: float
    stale: bool
    held_reason: str = ""


@dataclass(frozen=True, slots=True)
class LagReport:
    sources: tuple[SourceLag, ...]

    @property
    def stale(self) -> bool:
        return any(s.stale for s in self.sources)


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
    lags = []
    for mark in sorted(marks, key=lambda m: m.name):
        threshold = (overrides or {}).get(mark.name, DEFAULT_STALE_INTERVALS * interval)
        age = max((now - mark.last_success).total_seconds(), 0.0) if mark.last_success else None
        stale = age is None or age > threshold
        lags.append(SourceLag(mark.name, mark.last_success, mark.last_error, age, threshold, stale, mark.held_reason))
    return LagReport(tuple(lags))

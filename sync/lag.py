"""How fresh each source is, and the port that hears when one goes stale or recovers."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sync.store import SourceState

log = logging.getLogger(__name__)
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


class LagNotifier(Protocol):
    def notify(self, transition: LagTransition) -> None: ...


class LogNotifier:
    """The notifier until the Slack bot provides one: a warning line per transition."""

    def notify(self, transition: LagTransition) -> None:
        lag = transition.lag
        if transition.stale:
            age = "never synced" if lag.age_seconds is None else f"{lag.age_seconds:.0f} s since last success"
            log.warning("source %s is stale: %s; last error: %s", lag.name, age, lag.last_error or "none")
        else:
            log.warning("source %s recovered", lag.name)


def measure_lag(
    states: Iterable[SourceState], now: datetime, *, interval: float, overrides: Mapping[str, float] | None = None
) -> LagReport:
    """Stale when never synced or older than its threshold (default: three sync intervals)."""
    lags = []
    for state in sorted(states, key=lambda s: s.name):
        threshold = (overrides or {}).get(state.name, DEFAULT_STALE_INTERVALS * interval)
        age = (now - state.last_success).total_seconds() if state.last_success else None
        stale = age is None or age > threshold
        lags.append(
            SourceLag(state.name, state.last_success, state.last_error, age, threshold, stale, state.held_reason)
        )
    return LagReport(tuple(lags))

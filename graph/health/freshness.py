"""How fresh each source is, and the one rule for when it cannot be trusted.

A source cannot be trusted (is not `ok`) when it is past its limit or never synced (`stale`), when
its last read failed, or when its latest change is held for review: in each case answers come from
facts older than the source.
Every answer, `/graph-lag`, `oncall-graph lag`, `/metrics` and the lag alerts judge through `judge`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from graph.facts import SourceMark
from graph.health.source_problems import SourceProblems

DEFAULT_STALE_INTERVALS = 3
OK, OVERDUE, FAILING, HELD = "ok", "stale", "failing", "held"
STATES = (OK, OVERDUE, FAILING, HELD)


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
class UnprovenRefusals:
    """Deliveries to a pushed source's endpoint refused before they proved their sender (unsigned,
    wrongly signed, too large to check), as one replica counted them since it started. Anyone can
    send one, as often as they like, so they are never stored: a counter, a log line, this."""

    count: int
    last_at: datetime
    last_why: str


@dataclass(frozen=True, slots=True)
class SourceLag:
    """One source judged. `ok` is the verdict (not stale, failing or held); `stale` its age part:
    past its limit, or never synced.

    `age_seconds` counts from the last change that was applied (or confirmed unchanged): a held
    change is not applied, so a held source keeps ageing.
    """

    name: str
    last_success: datetime | None
    last_error: str
    age_seconds: float | None
    threshold_seconds: float | None  # None: a pushed source without a limit, never stale by age
    stale: bool
    held_reason: str = ""
    problems: tuple[str, ...] = ()  # the read's problems behind a held change (file, line, field)
    pushed: bool = False
    # A pushed source's last delivery refused after it proved its sender (a bad body), and why.
    last_refused: str = ""
    last_refused_at: datetime | None = None
    unproven: UnprovenRefusals | None = None  # deliveries refused before that, as one replica saw them
    # What was wrong in its applied read (junk documents, bad names, refused symlinks, unread files):
    # shown by every lag front. Only an unread file fails the source (its `last_error` says so).
    read_problems: SourceProblems | None = None

    @property
    def never_synced(self) -> bool:
        """Registered by a first attempt that failed (`last_error` says why), never applied; a pushed
        source waiting for its first event is not "never synced"."""
        return self.last_success is None and not self.pushed

    @property
    def ok(self) -> bool:
        """Fresh, read without error, and no change of it held for review."""
        return not (self.stale or self.last_error or self.held_reason)

    @property
    def held(self) -> bool:
        return bool(self.held_reason)

    @property
    def state(self) -> str:
        """The one word for it: `held` before `failing` before `stale` (what an admin must act on first)."""
        if self.held_reason:
            return HELD
        if self.last_error:
            return FAILING
        return OVERDUE if self.stale else OK


@dataclass(frozen=True, slots=True)
class LagReport:
    sources: tuple[SourceLag, ...]
    never_synced: tuple[str, ...] = ()  # configured, and no attempt recorded yet

    @property
    def stale(self) -> bool:
        """The overall verdict: any source past its limit, failing or held, or configured and never synced."""
        return bool(self.never_synced) or any(not s.ok for s in self.sources)

    @property
    def unhealthy(self) -> tuple[SourceLag, ...]:
        """The sources an answer must warn about: stale, failing or held."""
        return tuple(s for s in self.sources if not s.ok)


@dataclass(frozen=True, slots=True)
class LagTransition:
    """A source turned unhealthy (`stale` True: past its limit, failing or held) or recovered (False)."""

    source: str
    stale: bool
    at: datetime
    lag: SourceLag


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
                mark.held_problems,
                mark.pushed,
                mark.last_refused,
                mark.last_refused_at,
            )  # fmt: skip
        )
    return LagReport(tuple(lags))

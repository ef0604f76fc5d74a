"""The answer bundles: one frozen value per question kind, the only thing a front renders.

Each holds the resolution (entity, candidates, suggestions), the graph's result, the quoted runbook
passages (visibility applied), the freshness verdict with the graph's age, and the model's verified
phrasing when a model phrased it. Built by `bot.query.blast`, `.suspects`, `.alert`, `.ask`, `.lookup`, `.lag`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.model.ports import Phrasing
from bot.render.freshness import Freshness
from graph.exposure.passages import CitedPassage
from graph.health.freshness import LagReport
from graph.health.hygiene import LintReport
from graph.naming.names import Resolution
from graph.questions.ask import Answer
from graph.traffic.drift import Drift
from graph.traffic.live import NOTHING, Present
from graph.walks.blast import BlastRadius
from graph.walks.paths import CitedPath
from graph.walks.suspects import Suspects

SUSPECTS_SINCE, SUSPECTS_DEPTH = timedelta(hours=6), 2  # /suspects, `suspects` and its tool when not told


@dataclass(frozen=True, slots=True)
class BlastQuery:
    name: str
    depth: int | None = None


@dataclass(frozen=True, slots=True)
class SuspectsQuery:
    name: str
    since: timedelta = SUSPECTS_SINCE
    depth: int = SUSPECTS_DEPTH
    at: datetime | None = None  # the window's end (`--now`, an incident's start); default: now


@dataclass(frozen=True, slots=True)
class AlertQuery:
    """An alert on a service: its PagerDuty id and name (tried in that order), its title, when it began."""

    service_id: str
    service_name: str
    title: str = ""
    at: datetime | None = None

    @property
    def name(self) -> str:
        return self.service_name or self.service_id or self.title


@dataclass(frozen=True, slots=True)
class Resolved:
    """What a typed name resolved to; `named_elsewhere`: it names an entity this viewer may not see."""

    resolution: Resolution
    named_elsewhere: bool = False

    @property
    def entity(self) -> str | None:
        return self.resolution.entity


@dataclass(frozen=True, slots=True)
class BlastAnswer:
    query: BlastQuery
    resolved: Resolved
    freshness: Freshness
    result: BlastRadius | None = None  # None: the name did not resolve
    passages: tuple[CitedPassage, ...] = ()
    live: Present = NOTHING  # what is failing now, as this viewer may see it (`bot.query.live`)


@dataclass(frozen=True, slots=True)
class SuspectsAnswer:
    query: SuspectsQuery
    resolved: Resolved
    freshness: Freshness
    result: Suspects | None = None  # with a live part: dependencies failing now first
    passages: tuple[CitedPassage, ...] = ()
    live: Present = NOTHING


@dataclass(frozen=True, slots=True)
class AlertAnswer:
    """An alert thread's reply and a PagerDuty webhook's post: suspects, blast radius, passages, phrasing."""

    query: AlertQuery
    resolved: Resolved
    freshness: Freshness
    suspects: Suspects | None = None
    impact: BlastRadius | None = None
    passages: tuple[CitedPassage, ...] = ()
    phrasing: Phrasing | None = None
    fallback: str = ""  # why the model's phrasing is not shown, when one was asked for
    live: Present = NOTHING


@dataclass(frozen=True, slots=True)
class AskAnswer:
    question: str
    answer: Answer  # its mentions are the resolution: entities, candidates
    freshness: Freshness
    passages: tuple[CitedPassage, ...] = ()
    phrasing: Phrasing | None = None
    fallback: str = ""
    # What a mention draws (impact or dependency questions), walked only when a picture is drawn.
    view: Callable[[], BlastRadius | Suspects | None] = field(default=lambda: None, compare=False)
    live: Present = NOTHING  # its impact and dependency sections carry the live lines


@dataclass(frozen=True, slots=True)
class PathAnswer:
    ends: tuple[Resolved, Resolved]
    freshness: Freshness
    result: CitedPath | None = None  # None: an end did not resolve

    @property
    def unresolved(self) -> Resolved | None:
        return next((end for end in self.ends if end.entity is None), None)


@dataclass(frozen=True, slots=True)
class ResolveAnswer:
    resolved: Resolved
    freshness: Freshness


@dataclass(frozen=True, slots=True)
class DriftAnswer:
    """Where the catalog and the traffic disagree, as this viewer may see it."""

    report: Drift
    freshness: Freshness


@dataclass(frozen=True, slots=True)
class LintAnswer:
    report: LintReport
    freshness: Freshness


@dataclass(frozen=True, slots=True)
class LagAnswer:
    """How fresh each source is: the sources judged, and those configured that never synced once."""

    report: LagReport  # its `never_synced` holds the configured sources with no attempt recorded

    @property
    def never_synced(self) -> tuple[str, ...]:
        return self.report.never_synced

    @property
    def stale(self) -> bool:
        return self.report.stale

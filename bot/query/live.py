"""The live port: what the query layer asks of the present, implemented outside `bot` (`sync.live`)
and wired by the composition roots. An answer begins the look before its walk and waits after it,
so the walk and the reads overlap; the wait never outlasts the port's deadline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from bot.render.live import dependency_lines, impact_lines
from graph.exposure.visibility import Viewer
from graph.questions.ask import Answer, Section
from graph.questions.wording import DEFAULT_WINDOW, DEPENDENCIES, IMPACT
from graph.snapshot import Snapshot
from graph.traffic.live import NOTHING, LiveBlast, LiveNow, Present, live_suspects, present_of
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects

Pending = Callable[[], LiveNow]


class LiveSource(Protocol):
    def begin(self) -> Pending:
        """Start (or join) the look at the present; the callable returned waits for it, within the deadline."""
        ...


def begin(live: LiveSource | None) -> Pending | None:
    return live.begin() if live is not None else None


def looked(snapshot: Snapshot, pending: Pending | None, viewer: Viewer) -> Present:
    """What the look saw, by entity, as this viewer may read it; NOTHING without a live port."""
    if pending is None:
        return NOTHING
    return present_of(snapshot, pending()).for_viewer(snapshot, viewer)


def live_asked(answer: Answer) -> bool:
    """Whether the answer has a section the live part speaks to (impact, dependencies of an entity)."""
    return any(_speaks_to(s) for s in answer.sections)


def _speaks_to(section: Section) -> bool:
    return section.kind in (IMPACT, DEPENDENCIES) and bool(section.entities)


def live_sections(snapshot: Snapshot, answer: Answer, present: Present, viewer: Viewer, now: datetime) -> Answer:
    """The answer with each impact and dependency section telling what is failing now among what it
    lists, and the last of them citing the live part (or saying it is missing) in one line."""
    asked = [i for i, s in enumerate(answer.sections) if _speaks_to(s)]
    if not present.configured or not asked:
        return answer
    sections = list(answer.sections)
    for i in asked:
        section, ref = sections[i], sections[i].entities[0]
        if section.kind == IMPACT:
            lines = impact_lines(LiveBlast(blast_radius(snapshot, ref, viewer=viewer), present))
        else:
            found = suspects(snapshot, ref, now=now, window=section.window or DEFAULT_WINDOW, viewer=viewer)
            lines = dependency_lines(live_suspects(found, present), present)
        if i == asked[-1]:
            lines.append(present.said())
        sections[i] = replace(section, lines=(*section.lines, *lines))
    return replace(answer, sections=tuple(sections))

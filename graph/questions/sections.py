"""One ask answered for one entity (two for a path, none for the whole graph): a heading naming the ask
and the entity, the answer's lines, and the cited edges they rest on.

An answer is a list of these, one per ask per entity the question names, so every front can show each
ask in its own section ("payments — depends on", "payments — changed in the last 6 h", "payments —
owners") and a reader sees at a glance that none was dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from graph.citations import cite_edge
from graph.edges import EdgeFacts
from graph.naming.refs import short_name
from graph.questions.wording import AFFECTED, CHANGES, DEPENDENCIES, IMPACT, OWNERSHIP, PATH, RISK


@dataclass(frozen=True, slots=True)
class Section:
    """One ask's answer: plain lines, then the cited edges they rest on (each cited once)."""

    kind: str  # one of graph.questions.wording.KINDS
    # refs: the entity asked about, both ends of a path, the one asked about and the failed one (`affected`),
    # none for the whole graph
    entities: tuple[str, ...]
    lines: tuple[str, ...]
    edges: tuple[EdgeFacts, ...] = ()
    window: timedelta | None = None  # the deploys' window, for dependencies and changes
    through: bool = False  # ownership asked through a dependency ("who owns what payments calls")

    @property
    def title(self) -> str:
        return title(self.kind, self.entities, self.window, through=self.through)

    @property
    def cited_lines(self) -> tuple[str, ...]:
        return tuple(cite_edge(e) for e in self.edges)


def title(kind: str, entities: tuple[str, ...], window: timedelta | None, *, through: bool = False) -> str:
    """The heading of a section: the entity (or both ends), then what was asked of it."""
    if kind == AFFECTED and len(entities) == 2:
        return f"{short_name(entities[0])} — if {short_name(entities[1])} goes down"
    ask = _ask_words(kind, window, through)
    if not entities:
        return ask
    named = " → ".join(short_name(e) for e in entities)
    return f"{named} — {ask}"


def _ask_words(kind: str, window: timedelta | None, through: bool) -> str:
    if kind == CHANGES:
        return f"changed in the last {span(window)}" if window is not None else "recent changes"
    if kind == OWNERSHIP:
        return "owners of what it depends on" if through else "owners"
    return {
        DEPENDENCIES: "depends on",
        IMPACT: "what breaks if it fails",
        AFFECTED: "does it break",
        PATH: "how they are linked",
        RISK: "single points of failure",
    }.get(kind, kind)


def span(window: timedelta | None) -> str:
    """A window as a heading says it: `6 h`, `30 min`, `1.5 h`, `3 days`."""
    if window is None:
        return ""
    seconds = window.total_seconds()
    if seconds >= 2 * 86400 and seconds % 86400 == 0:
        return f"{seconds / 86400:g} days"
    if seconds >= 3600:
        return f"{round(seconds / 3600, 2):g} h"
    return f"{round(seconds / 60, 1):g} min"

"""Deterministic answers to free-text questions: find the entities, read the asks, answer each, cite.

A question is a set of asks (`graph.questions.wording`); the answer covers every ask for every entity the
question names, or, for a question about everything, the whole graph (`graph.questions.broad`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from graph.citations import cite_edge
from graph.edges import EdgeFacts
from graph.exposure.redaction import redact_edge
from graph.exposure.visibility import EVERYONE, Viewer, can_see
from graph.naming.names import Allow, resolve
from graph.naming.refs import short_name
from graph.questions import answers, broad
from graph.questions.affected import affected
from graph.questions.mentions import Mention, find_mentions, roles, unresolved_note, with_missing
from graph.questions.missing import close, name_like_words, unknown_names
from graph.questions.sections import Section
from graph.questions.wording import (
    AFFECTED,
    CHANGES,
    DEFAULT_WINDOW,
    DEPENDENCIES,
    IMPACT,
    KINDS,
    OWNERSHIP,
    PATH,
    RISK,
    bounded_window,
    read_kinds,
    read_window,
)
from graph.snapshot import Snapshot

__all__ = [
    "AFFECTED", "CHANGES", "DEFAULT_WINDOW", "DEPENDENCIES", "IMPACT", "KINDS", "OWNERSHIP", "PATH", "RISK",
    "Answer", "Ask", "Mention", "Section", "answer_intent", "ask", "find_mentions", "read_intent", "read_window",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Ask:
    """One thing the question asks, about the entities it names (none: about the whole graph)."""

    kind: str  # one of graph.questions.wording.KINDS
    entities: tuple[str, ...] = ()
    window: timedelta | None = None  # for dependencies and changes: the deploys shown


@dataclass(frozen=True, slots=True)
class Answer:
    """One section per ask per entity (each its sentences and the cited edges they rest on), the notes
    said before them (an ambiguous name, what can be asked), and the asks answered."""

    question: str
    intent: str  # the first ask's kind
    mentions: tuple[Mention, ...]
    sections: tuple[Section, ...] = ()
    notes: tuple[str, ...] = ()
    asks: tuple[Ask, ...] = field(default=())

    @property
    def entities(self) -> tuple[str, ...]:
        return tuple(m.entity for m in self.mentions if m.entity)

    @property
    def unresolved(self) -> tuple[Mention, ...]:
        """The names the question types that resolve to no one entity (nothing, or several)."""
        return tuple(m for m in self.mentions if m.entity is None)

    @property
    def sentences(self) -> tuple[str, ...]:
        return self.notes + tuple(line for s in self.sections for line in s.lines)

    @property
    def edges(self) -> tuple[EdgeFacts, ...]:
        """Every section's edges, once each, in the order the sections cite them."""
        return tuple(dict.fromkeys(e for s in self.sections for e in s.edges))

    @property
    def cited_lines(self) -> tuple[str, ...]:
        return tuple(cite_edge(e) for e in self.edges)

    @property
    def text(self) -> str:
        return "\n".join(self.sentences + self.cited_lines)


def read_intent(question: str, mentions: int) -> str:
    """The question's first ask (of `graph.questions.wording.read_kinds`)."""
    return read_kinds(question, mentions)[0]


def ask(snapshot: Snapshot, question: str, *, now: datetime, viewer: Viewer = EVERYONE) -> Answer:
    """Answer from the graph only; a question naming no known entity says what can be asked."""
    allow = _allow(snapshot, viewer)
    mentions = with_missing(snapshot, question, find_mentions(snapshot.aliases, question, allow), allow)
    kinds = read_kinds(question, len(mentions))  # a name that resolves to nothing is still one of its names
    return _answered(snapshot, question, mentions, kinds, now=now, window=read_window(question, now), viewer=viewer)


def answer_intent(
    snapshot: Snapshot,
    question: str,
    mentions: Sequence[Mention],
    intent: str,
    *,
    now: datetime,
    window: timedelta = DEFAULT_WINDOW,
    viewer: Viewer = EVERYONE,
    names: Sequence[str] = (),
    kinds: Sequence[str] = (),
) -> Answer:
    """The graph's answer for entities and asks already read from the question (by any reader).

    `kinds` are the asks (default: `intent` alone); `names` are the words to suggest entities for
    when no mention resolved (default: the question's own words that look like names). Every name
    that does not resolve is answered with suggestions, and an ask that needs it (a path, whether one
    breaks with another) is left to that note rather than answered for fewer names.
    """
    kinds = tuple(dict.fromkeys(kinds or (intent,)))
    mentions = tuple(mentions)
    mentions = with_missing(snapshot, question, mentions, _allow(snapshot, viewer), kinds)
    return _answered(snapshot, question, mentions, kinds, now=now, window=window, viewer=viewer, names=names)


def _answered(
    snapshot: Snapshot,
    question: str,
    mentions: tuple[Mention, ...],
    kinds: tuple[str, ...],
    *,
    now: datetime,
    window: timedelta,
    viewer: Viewer,
    names: Sequence[str] = (),
) -> Answer:
    """The answer once every name the question types is found: resolved, ambiguous or missing; a window
    outside 1 minute … 1 year is moved to the nearest one answers take, and the answer says so."""
    window, moved = bounded_window(question, window)
    if any(m.entity for m in mentions):
        answer = _about_named(snapshot, question, mentions, kinds, now, window, viewer)
    else:
        notes = tuple(unresolved_note(snapshot, m, _allow(snapshot, viewer)) for m in mentions if m.candidates)
        kinds = tuple(k for k in kinds if k != PATH) or (DEPENDENCIES,)
        answer = _about_everything(snapshot, question, mentions, kinds, notes, now, window, viewer, names)
    if moved and any(a.window is not None for a in answer.asks):
        return replace(answer, notes=(*answer.notes, moved))
    return answer


def _about_named(
    snapshot: Snapshot, question: str, mentions: tuple[Mention, ...], kinds: tuple[str, ...], now: datetime,
    window: timedelta, viewer: Viewer,
) -> Answer:  # fmt: skip
    """Each ask for every entity named, and a note for each name that resolved to no one entity."""
    intent = kinds[0]
    resolved = tuple(dict.fromkeys(m.entity for m in mentions if m.entity))
    notes = tuple(unresolved_note(snapshot, m, _allow(snapshot, viewer)) for m in mentions if m.entity is None)
    if PATH in kinds and len(resolved) < 2:
        kinds = tuple(k for k in kinds if k != PATH) or (() if notes else (DEPENDENCIES,))
    sides = roles(question, mentions) if IMPACT in kinds else None
    if sides is not None:  # "if X dies does Y go down": whether Y breaks, not two blast radii
        kinds = tuple(AFFECTED if k == IMPACT else k for k in kinds)
    sections: list[Section] = []
    asks = []
    for kind in kinds:
        if kind == AFFECTED and sides is not None:
            pairs = [(ref, sides.failing) for ref in sides.asked if ref in resolved and sides.failing in resolved]
            survives = sides.survives
            sections += [affected(snapshot, ref, failing, viewer, survives=survives) for ref, failing in pairs]
            asks += [Ask(AFFECTED, pair) for pair in pairs]
            continue
        targets = resolved[:2] if kind == PATH else resolved
        sections += _answer_one(snapshot, question, kind, kinds, targets, now, window, viewer)
        asks.append(Ask(kind, targets, window if kind in (DEPENDENCIES, CHANGES) else None))
    first = asks[0].kind if asks else kinds[0] if kinds else intent
    return Answer(question, first, mentions, _readable(snapshot, sections, viewer), notes, tuple(asks))


def _answer_one(
    snapshot: Snapshot,
    question: str,
    kind: str,
    kinds: tuple[str, ...],
    targets: tuple[str, ...],
    now: datetime,
    window: timedelta,
    viewer: Viewer,
) -> list[Section]:
    if kind == PATH:
        return [answers.path(snapshot, targets[0], targets[1], viewer)]
    if kind == DEPENDENCIES:
        owners, deploys = OWNERSHIP in kinds, CHANGES not in kinds  # asked for, the deploys have their own section
        return [answers.dependencies(snapshot, r, now, window, viewer, owners=owners, deploys=deploys) for r in targets]
    if kind == CHANGES:
        return [answers.changes(snapshot, r, now, window, viewer) for r in targets]
    if kind == OWNERSHIP:
        beside = DEPENDENCIES in kinds  # "... and who owns each?": the entity's owners, then each dependency's
        return [answers.ownership(snapshot, r, question, viewer, through=not beside, each=beside) for r in targets]
    if kind in (IMPACT, RISK):
        if kind == RISK and IMPACT in kinds:
            return []
        systems = kind == RISK or "system" in question.casefold() or "at risk" in question.casefold()
        return [answers.impact(snapshot, r, viewer, systems=systems) for r in targets]
    return []


def _about_everything(
    snapshot: Snapshot,
    question: str,
    mentions: tuple[Mention, ...],
    kinds: tuple[str, ...],
    notes: tuple[str, ...],
    now: datetime,
    window: timedelta,
    viewer: Viewer,
    names: Sequence[str],
) -> Answer:
    """A question naming no entity: deploys across the graph, the entities most at risk, or what can be asked."""
    if notes:
        return Answer(question, kinds[0], mentions, notes=notes)
    suggestions = _suggestions(snapshot, question, names, viewer)
    unknown = bool(names) or bool(unknown_names(question))  # a name the graph does not hold: no broad answer
    sections: list[Section] = []
    if not suggestions and not unknown:
        if CHANGES in kinds:
            sections.append(broad.recent_deploys(snapshot, now, window, viewer))
        if RISK in kinds:
            sections.append(broad.most_at_risk(snapshot, viewer))
    if not sections:
        return Answer(question, kinds[0], mentions, notes=broad.what_can_be_asked(snapshot, viewer, suggestions))
    asks = tuple(Ask(s.kind, (), s.window) for s in sections)
    return Answer(question, asks[0].kind, mentions, _readable(snapshot, sections, viewer), asks=asks)


def _suggestions(snapshot: Snapshot, question: str, names: Sequence[str], viewer: Viewer) -> tuple[str, ...]:
    """Entities a misspelt name in the question may mean: only for words that look like names."""
    allow = _allow(snapshot, viewer)
    words = list(names) or name_like_words(question)
    found: list[str] = []
    for word in words:
        for ref in (
            resolve(snapshot.aliases, word, allow=allow).suggestions[:2]
            if names
            else close(snapshot.aliases, word, allow)
        ):
            found.append(short_name(ref))
    return tuple(dict.fromkeys(found))


def _allow(snapshot: Snapshot, viewer: Viewer) -> Allow | None:
    return None if viewer.everything else (lambda ref: can_see(snapshot, ref, viewer))


def _readable(snapshot: Snapshot, sections: Sequence[Section], viewer: Viewer) -> tuple[Section, ...]:
    """The sections with their edges once each, as this viewer may read their citations."""
    return tuple(
        replace(s, edges=tuple(redact_edge(snapshot, e, viewer) for e in dict.fromkeys(s.edges))) for s in sections
    )

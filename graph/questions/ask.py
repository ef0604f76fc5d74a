"""Deterministic answers to free-text questions: find the entities, read the asks, answer each, cite.

A question is a set of asks (`graph.questions.wording`); the answer covers every ask for every entity the
question names, or, for a question about everything, the whole graph (`graph.questions.broad`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from graph.citations import cite_edge
from graph.edges import EdgeFacts
from graph.naming.names import AliasIndex, Allow, name_words, resolve
from graph.naming.refs import short_name
from graph.questions import answers, broad
from graph.questions.affected import Roles, affected, read_roles
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
    read_kinds,
    read_window,
)
from graph.redaction import redact_edge
from graph.snapshot import Snapshot
from graph.visibility import EVERYONE, Viewer, can_see

__all__ = [
    "AFFECTED", "CHANGES", "DEFAULT_WINDOW", "DEPENDENCIES", "IMPACT", "KINDS", "OWNERSHIP", "PATH", "RISK",
    "Answer", "Ask", "Mention", "Section", "answer_intent", "ask", "find_mentions", "read_intent", "read_window",
]  # fmt: skip

MAX_ALIAS_WORDS = 6
SUGGEST_CUTOFF = 60.0  # of graph.naming.suggest's blend: one edit in five letters, for a word that is no common word
_POSSESSIVE = re.compile(r"['’]s\b|['’]$")
# "4h", "30min", "2d": a window as typed, never a name the graph lacks.
_WINDOW_TOKEN = re.compile(r"\d+(\.\d+)?(m|min|mins|h|hr|hrs|d|w)")
_PREPOSITIONS = frozenset({"in", "to", "for", "on", "about", "of", "under", "with", "from", "behind"})


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _words(
    "a an the what which who whom whose is are was were if do does did of to in on for and or it its that this"
    " goes go down breaks break fails fail by with from i we me my our us you your"
)
# Common words of questions: never taken for a misspelt name (a suggestion for "owns" is noise).
_QUESTION_WORDS = _STOPWORDS | _words(
    "about after all any anything around be been being call calls changed changes could deploy deployed deploys"
    " each else everything failure happens has have how last least list most much need next now own owned owner"
    " owners owns past ping recent recently risk should since single some someone tell than them then there"
    " these they those today uses what's when where whom why will would yesterday hours hour minutes days"
    " points point system systems service services team teams shipped ship releases released release went"
    " out got anything deployments rolled roll prod production graph site slow broken okay fine thanks help"
    " first look should start today's yesterday's morning night week hours? it? ok everything"
)


@dataclass(frozen=True, slots=True)
class Mention:
    text: str
    entity: str | None
    candidates: tuple[str, ...] = ()
    span: tuple[int, int] | None = None  # where among the question's name words (None: named by a model)


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


def find_mentions(index: AliasIndex, question: str, allow: Allow | None = None) -> tuple[Mention, ...]:
    """Entities a question names: the longest alias match at each position, left to right, over whole
    words as typed (`shop-payment-crad-service` is no mention of `shop-payment`: it is one misspelt name)."""
    words, starts, ends = _words_of(question)
    found: list[Mention] = []
    i = 0
    while i < len(words):
        for n in range(min(MAX_ALIAS_WORDS, len(words) - i), 0, -1):
            phrase = words[i : i + n]
            if all(w in _STOPWORDS for w in phrase) or i not in starts or i + n not in ends:
                continue
            text = " ".join(phrase)
            tier, refs = index.lookup(text, allow)
            if not refs and n == 1 and len(text) < 3:
                continue
            if refs:
                entity = next(iter(refs)) if len(refs) == 1 else None
                mention = Mention(text, entity, tuple(sorted(refs)) if entity is None else (), (i, i + n))
                if all(m.entity != entity or entity is None for m in found):
                    found.append(mention)
                i += n
                break
        else:
            i += 1
    return tuple(found)


def _words_of(question: str) -> tuple[list[str], set[int], set[int]]:
    """The question's name words, and where the typed tokens (split on spaces) start and end among them."""
    words: list[str] = []
    starts, ends = set(), set()
    for token in question.split():
        token = _POSSESSIVE.sub("", token)
        parts = name_words(token)
        if parts:
            starts.add(len(words))
            words += parts
            ends.add(len(words))
    return words, starts, ends


def read_intent(question: str, mentions: int) -> str:
    """The question's first ask (of `graph.questions.wording.read_kinds`)."""
    return read_kinds(question, mentions)[0]


def ask(snapshot: Snapshot, question: str, *, now: datetime, viewer: Viewer = EVERYONE) -> Answer:
    """Answer from the graph only; a question naming no known entity says what can be asked."""
    allow = None if viewer.everything else (lambda ref: can_see(snapshot, ref, viewer))
    mentions = find_mentions(snapshot.aliases, question, allow)
    kinds = read_kinds(question, sum(1 for m in mentions if m.entity))
    return answer_intent(
        snapshot, question, mentions, kinds[0], now=now, window=read_window(question, now), viewer=viewer, kinds=kinds
    )


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
    when no mention resolved (default: the question's own words that look like names).
    """
    kinds = tuple(dict.fromkeys(kinds or (intent,)))
    mentions = tuple(mentions)
    resolved = tuple(dict.fromkeys(m.entity for m in mentions if m.entity))
    ambiguous = [m for m in mentions if m.entity is None and m.candidates]
    notes = tuple(
        f"'{m.text}' could mean {', '.join(short_name(c) for c in m.candidates)}; name one of them." for m in ambiguous
    )
    if PATH in kinds and len(resolved) < 2:
        kinds = tuple(k for k in kinds if k != PATH) or (DEPENDENCIES,)
    if not resolved:
        return _about_everything(snapshot, question, mentions, kinds, notes, now, window, viewer, names)
    roles = _roles(snapshot, question, mentions, viewer) if IMPACT in kinds and len(resolved) >= 2 else None
    if roles is not None:  # "if X dies does Y go down": whether Y breaks, not two blast radii
        kinds = tuple(AFFECTED if k == IMPACT else k for k in kinds)
    sections: list[Section] = []
    asks = []
    for kind in kinds:
        if kind == AFFECTED and roles is not None:
            survives = roles.survives
            sections += [affected(snapshot, ref, roles.failing, viewer, survives=survives) for ref in roles.asked]
            asks += [Ask(AFFECTED, (ref, roles.failing)) for ref in roles.asked]
            continue
        targets = resolved[:2] if kind == PATH else resolved
        sections += _answer_one(snapshot, question, kind, kinds, targets, now, window, viewer)
        asks.append(Ask(kind, targets, window if kind in (DEPENDENCIES, CHANGES) else None))
    return Answer(question, kinds[0], mentions, _readable(snapshot, sections, viewer), notes, tuple(asks))


def _roles(snapshot: Snapshot, question: str, mentions: tuple[Mention, ...], viewer: Viewer) -> Roles | None:
    """Which named entity fails and which are asked about, when the question asks whether they break with it."""
    if any(m.entity and m.span is None for m in mentions):  # named by the model reader: find them in the words
        allow = None if viewer.everything else (lambda ref: can_see(snapshot, ref, viewer))
        named = {m.entity for m in mentions if m.entity}
        mentions = tuple(m for m in find_mentions(snapshot.aliases, question, allow) if m.entity in named)
    spans = [(m.entity, *m.span) for m in mentions if m.entity and m.span is not None]
    return read_roles(_words_of(question)[0], spans)


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
    unknown = bool(names) or bool(_unknown_names(question))  # a name the graph does not hold: no broad answer
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
    allow = None if viewer.everything else (lambda ref: can_see(snapshot, ref, viewer))
    words = list(names) or _name_like_words(question)
    found: list[str] = []
    for word in words:
        for ref in (
            resolve(snapshot.aliases, word, allow=allow).suggestions[:2] if names else _close(snapshot, word, allow)
        ):
            found.append(short_name(ref))
    return tuple(dict.fromkeys(found))


def _close(snapshot: Snapshot, word: str, allow: Allow | None) -> tuple[str, ...]:
    return snapshot.aliases.suggest(word, limit=2, cutoff=SUGGEST_CUTOFF, allow=allow, loose=False)


def _unknown_names(question: str) -> list[str]:
    """Words that can only be names the graph does not hold: hyphenated or with digits, or the
    uncommon word after a preposition ("what changed in memcached")."""
    tokens = [t for t in _tokens(question) if not _WINDOW_TOKEN.fullmatch(t)]
    named = [t for t in tokens if re.search(r"[-_]|\d[a-z]|[a-z]\d", t)]
    after = [b for a, b in zip(tokens, tokens[1:], strict=False) if a in _PREPOSITIONS and b not in _QUESTION_WORDS]
    return named + [t for t in after if len(t) >= 3]


def _name_like_words(question: str) -> list[str]:
    """The question's tokens (split on spaces, so `ts-travle-servcie` stays whole) that are no common word."""
    tokens = [t for t in _tokens(question) if not _WINDOW_TOKEN.fullmatch(t)]
    return [t for t in tokens if len(t) >= 4 and t not in _QUESTION_WORDS and not t.isdigit()]


def _tokens(question: str) -> list[str]:
    return [t.strip(".,;:!?()[]{}\"'`").casefold() for t in question.split()]


def _readable(snapshot: Snapshot, sections: Sequence[Section], viewer: Viewer) -> tuple[Section, ...]:
    """The sections with their edges once each, as this viewer may read their citations."""
    return tuple(
        replace(s, edges=tuple(redact_edge(snapshot, e, viewer) for e in dict.fromkeys(s.edges))) for s in sections
    )

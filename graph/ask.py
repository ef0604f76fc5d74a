"""Deterministic answers to free-text questions: find the entities, read the intent, walk, cite."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from graph.blast import blast_radius
from graph.citations import cite_edge
from graph.edges import EdgeFacts
from graph.names import AliasIndex, Allow, canonical_words, resolve
from graph.paths import find_path
from graph.refs import short_name
from graph.snapshot import Snapshot
from graph.suspects import Dependency, suspects
from graph.visibility import EVERYONE, Viewer, can_see, visible

T = TypeVar("T")

IMPACT = "impact"
DEPENDENCIES = "dependencies"
OWNERSHIP = "ownership"
PATH = "path"

MAX_ALIAS_WORDS = 6
DEFAULT_WINDOW = timedelta(hours=6)
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "what",
        "which",
        "who",
        "whom",
        "is",
        "are",
        "was",
        "were",
        "if",
        "do",
        "does",
        "did",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "it",
        "its",
        "that",
        "this",
        "goes",
        "go",
        "down",
        "breaks",
        "break",
        "fails",
        "fail",
        "by",
        "with",
        "from",
    }
)
_INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (PATH, re.compile(r"\b(path|between|connect(ed|s)?|chain|route|how does .+ reach)\b")),
    (IMPACT, re.compile(r"\b(break|breaks|broken|down|fail|fails|failing|outage|impact|blast|affected|survive)")),
    (OWNERSHIP, re.compile(r"\b(own|owns|owned|owner|owners|responsible|team|page|on-?call)\b")),
    (DEPENDENCIES, re.compile(r"\b(depend|depends|call|calls|use|uses|deploy|deployed|changed?|recent|need)")),
)
_WINDOW = re.compile(r"\b(?:last|past)\s+(\d+)\s*(minute|min|hour|hr|h|day|d)s?\b|\b(\d+)\s*(m|h|d)\b")


@dataclass(frozen=True, slots=True)
class Mention:
    text: str
    entity: str | None
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    """Plain sentences plus the cited edges they rest on (one line per edge)."""

    question: str
    intent: str
    mentions: tuple[Mention, ...]
    sentences: tuple[str, ...]
    edges: tuple[EdgeFacts, ...]

    @property
    def entities(self) -> tuple[str, ...]:
        return tuple(m.entity for m in self.mentions if m.entity)

    @property
    def cited_lines(self) -> tuple[str, ...]:
        return tuple(cite_edge(e) for e in self.edges)

    @property
    def text(self) -> str:
        return "\n".join(self.sentences + self.cited_lines)


def find_mentions(index: AliasIndex, question: str, allow: Allow | None = None) -> tuple[Mention, ...]:
    """Entities a question names: the longest alias match at each position, left to right."""
    words = canonical_words(question)
    found: list[Mention] = []
    i = 0
    while i < len(words):
        for n in range(min(MAX_ALIAS_WORDS, len(words) - i), 0, -1):
            phrase = words[i : i + n]
            if all(w in _STOPWORDS for w in phrase):
                continue
            text = " ".join(phrase)
            tier, refs = index.lookup(text, allow)
            if not refs and n == 1 and len(text) < 3:
                continue
            if refs:
                entity = next(iter(refs)) if len(refs) == 1 else None
                mention = Mention(text, entity, tuple(sorted(refs)) if entity is None else ())
                if all(m.entity != entity or entity is None for m in found):
                    found.append(mention)
                i += n
                break
        else:
            i += 1
    return tuple(found)


def read_intent(question: str, mentions: int) -> str:
    lowered = question.casefold()
    for intent, pattern in _INTENTS:
        if pattern.search(lowered) and (intent != PATH or mentions >= 2):
            return intent
    return PATH if mentions >= 2 else DEPENDENCIES


def read_window(question: str) -> timedelta:
    match = _WINDOW.search(question.casefold())
    if not match:
        return DEFAULT_WINDOW
    amount = int(match.group(1) or match.group(3))
    unit = (match.group(2) or match.group(4))[0]
    return {"m": timedelta(minutes=amount), "h": timedelta(hours=amount), "d": timedelta(days=amount)}[unit]


def ask(snapshot: Snapshot, question: str, *, now: datetime, viewer: Viewer = EVERYONE) -> Answer:
    """Answer from the graph only; a question naming no known entity says so, with suggestions."""
    allow = None if viewer.everything else (lambda ref: can_see(snapshot, ref, viewer))
    mentions = find_mentions(snapshot.aliases, question, allow)
    intent = read_intent(question, len(mentions))
    return answer_intent(snapshot, question, mentions, intent, now=now, window=read_window(question), viewer=viewer)


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
) -> Answer:
    """The graph's answer for entities and an intent already read from the question (by any reader).

    `names` are the words to suggest entities for when no mention resolved (default: the question's).
    """
    allow = None if viewer.everything else (lambda ref: can_see(snapshot, ref, viewer))
    mentions = tuple(mentions)
    resolved = [m.entity for m in mentions if m.entity]
    ambiguous = [m for m in mentions if m.entity is None and m.candidates]
    notes = tuple(
        f"'{m.text}' could mean {', '.join(short_name(c) for c in m.candidates)}; name one of them." for m in ambiguous
    )
    if not resolved:
        words = names or [w for w in canonical_words(question) if w not in _STOPWORDS]
        return Answer(question, intent, mentions, notes or (_no_entity(snapshot.aliases, words, allow),), ())
    if intent == PATH and len(resolved) >= 2:
        sentences, edges = _answer_path(snapshot, resolved[0], resolved[1], viewer)
    elif intent == IMPACT:
        sentences, edges = _answer_impact(snapshot, resolved[0], viewer)
    elif intent == OWNERSHIP:
        sentences, edges = _answer_ownership(snapshot, resolved[0], question, viewer)
    else:
        sentences, edges = _answer_dependencies(snapshot, resolved[0], now, window, viewer)
    return Answer(question, intent, mentions, notes + sentences, edges)


def _no_entity(index: AliasIndex, words: Sequence[str], allow: Allow | None) -> str:
    suggestions = [short_name(r) for w in words for r in resolve(index, w, allow=allow).suggestions[:2]]
    hint = f" Did you mean: {', '.join(dict.fromkeys(suggestions))}?" if suggestions else ""
    return f"I could not find an entity of the graph in that question.{hint}"


def _answer_impact(snapshot: Snapshot, ref: str, viewer: Viewer) -> tuple[tuple[str, ...], tuple[EdgeFacts, ...]]:
    result = blast_radius(snapshot, ref, viewer=viewer)
    name = short_name(ref)
    if not result.impacted:
        return (f"Nothing in the graph depends on {name}.",), ()
    breaks = [short_name(i.entity) for i in result.impacted if i.impact == "breaks"]
    degrades = [short_name(i.entity) for i in result.impacted if i.impact == "degrades"]
    sentences = [f"If {name} goes down, {_join(breaks)} break{'s' if len(breaks) == 1 else ''}."] if breaks else []
    if degrades:
        sentences.append(f"{_join(degrades)} degrade{'s' if len(degrades) == 1 else ''} (soft dependencies).")
    if result.hidden_count:
        sentences.append(f"{result.hidden_count} more impacted entities are not visible here.")
    if result.survives:
        sentences.append(f"Survives: {_join([short_name(s) for s in result.survives])}.")
    edges = tuple(dict.fromkeys(e for i in result.impacted for e in i.edges))
    return tuple(sentences), edges


_VERB_RELATIONS = (
    ("publish", "publishes_to"),
    ("call", "calls"),
    ("read", "reads_from"),
    ("writ", "writes_to"),
    ("run", "runs_on"),
    ("back", "backed_by"),
    ("use", "uses"),
    ("consum", "consumes_api"),
)
_KIND_WORDS = (("api", "api"), ("database", "resource"), ("datastore", "resource"), ("queue", "resource"))
_DEPENDENCY_WORDS = re.compile(r"\b(depend|call|use|consum|relies|rely|publish|read|writ|runs|backed|talk)")


def _answer_ownership(
    snapshot: Snapshot, ref: str, question: str, viewer: Viewer
) -> tuple[tuple[str, ...], tuple[EdgeFacts, ...]]:
    """Owners of the entity, or, when the question asks through a dependency, of what it depends on."""
    lowered = question.casefold()
    targets = [ref]
    via: list[EdgeFacts] = []
    if _DEPENDENCY_WORDS.search(lowered):
        deps: Sequence[Dependency] = suspects(
            snapshot, ref, now=snapshot.built_at, max_depth=1, viewer=viewer
        ).dependencies
        relations = [rel for verb, rel in _VERB_RELATIONS if verb in lowered]
        kinds = [kind for word, kind in _KIND_WORDS if word in lowered]
        deps = _narrowed(deps, lambda d: d.edges[-1].rel, relations)
        deps = _narrowed(deps, lambda d: d.entity.split(":")[0], kinds)
        targets = [d.entity for d in deps]
        via = [e for d in deps for e in d.edges]
    sentences, edges = [], list(via)
    for target in targets:
        owners = visible(snapshot, snapshot.owners(target), viewer)
        sentences.append(_owner_sentence(target, owners))
        edges += [e for e in snapshot.out_edges.get(target, ()) if e.rel == "owned_by" and e.dst in owners]
        claimed = visible(snapshot, (c.owner for c in snapshot.owner_claims(target)), viewer)
        disputed = [owner for owner in claimed if owner not in owners]
        if disputed:
            others = _join([short_name(o) for o in disputed])
            sentences.append(f"Text also names {others} as owner of {short_name(target)}.")
    return tuple(sentences), tuple(dict.fromkeys(edges))


def _narrowed(items: Sequence[T], key: Callable[[T], str], wanted: list[str]) -> Sequence[T]:
    """Keep the items whose key is wanted, unless that would leave nothing (then the words were loose)."""
    kept = [item for item in items if key(item) in wanted]
    return kept or items


def _owner_sentence(ref: str, owners: tuple[str, ...]) -> str:
    if not owners:
        return f"No source names an owner for {short_name(ref)}."
    return f"{short_name(ref)} is owned by {_join([short_name(o) for o in owners])}."


def _answer_dependencies(
    snapshot: Snapshot, ref: str, now: datetime, window: timedelta, viewer: Viewer
) -> tuple[tuple[str, ...], tuple[EdgeFacts, ...]]:
    result = suspects(snapshot, ref, now=now, window=window, viewer=viewer)
    name = short_name(ref)
    if not result.dependencies:
        return (f"{name} depends on nothing in the graph.",), ()
    direct = [short_name(d.entity) for d in result.dependencies if d.hops == 1]
    sentences = [f"{name} depends on {_join(direct)}."]
    for dep in result.dependencies:
        owners = _join([short_name(o) for o in dep.owners]) or "no known owner"
        for suspect in dep.deploys:
            d = suspect.deploy
            when = d.deployed_at.strftime("%Y-%m-%d %H:%M UTC")
            sentences.append(
                f"{short_name(dep.entity)} ({owners}) was deployed: {d.id} {d.version} at {when}"
                f" — suspect, {suspect.reason}."
            )
    for suspect in result.own_deploys:
        sentences.append(f"{name} itself was deployed: {suspect.deploy.id} at {suspect.deploy.deployed_at:%H:%M} UTC.")
    if len(sentences) == 1:
        sentences.append(f"None of them was deployed in the last {_duration(window)}.")
    edges = tuple(dict.fromkeys(e for d in result.dependencies for e in d.edges))
    return tuple(sentences), edges


def _answer_path(snapshot: Snapshot, a: str, b: str, viewer: Viewer) -> tuple[tuple[str, ...], tuple[EdgeFacts, ...]]:
    found = find_path(snapshot, a, b, viewer=viewer)
    if not found.path:
        return (f"The graph has no chain of edges between {short_name(a)} and {short_name(b)}.",), ()
    chain = " -> ".join(short_name(r) for r in found.path)
    return (f"{short_name(a)} and {short_name(b)} are linked: {chain}.",), found.edges


def _join(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _duration(window: timedelta) -> str:
    hours = window.total_seconds() / 3600
    return f"{hours:g} hours" if hours >= 1 else f"{window.total_seconds() / 60:g} minutes"

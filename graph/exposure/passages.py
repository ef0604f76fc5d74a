"""Runbook passages linked to the entities they name, and the ones to quote beside an answer.

A passage is linked to every entity its headings or its prose name, found through the alias index
(exact and canonical tiers: "the token cache", "Token Cache" and "token-cache" all name
`token-cache`). The scan walks the passage's words once, extending a match only while the words so
far begin some alias (a token trie kept as a set of prefixes), and keeps the longest match: the
cost grows with the text, not with the size of the catalog. Fenced code is not scanned (`# redis`
in a shell snippet names nothing), a name two entities share links neither, and nothing is
guessed below the canonical tier.

Pure: no I/O. The index is built once per built graph, on first use (`passage_index`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from graph.exposure.redaction import hidden_from, passage_hidden
from graph.exposure.visibility import EVERYONE, Viewer
from graph.facts import Passage
from graph.naming.names import AFFIXES, AliasIndex

if TYPE_CHECKING:
    from graph.snapshot import Snapshot

MAX_NAME_WORDS = 8  # longer aliases are never looked for in prose
DEFAULT_LIMIT = 3
SNIPPET_CHARS = 160
# `graph.naming.names`' separators, and markup that is never part of a name in prose (`**Redis**`, `| a |`).
_SPLIT = re.compile(r"[\s\-_./:'\"`,;!?()\[\]{}*>|=<~^\\#]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])")  # as graph.naming.names splits CamelCase
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PASSAGE_INDEX = f"{__name__}.passage_index"  # this module's key in `Snapshot.derived`


@dataclass(frozen=True, slots=True)
class LinkedPassage:
    """A passage and the entities it names: in its nearest heading, in any heading above it, in its text."""

    passage: Passage
    entities: frozenset[str]
    in_heading: frozenset[str]
    in_headings: frozenset[str]
    in_text: frozenset[str]

    def rank_for(self, entity: str) -> tuple[int, int, int, str, int]:
        """Best first: named in its own section's heading, then in a heading above (the document's
        title counts as one: every passage of `redis.md` is under it), then the most specific."""
        own = entity in self.in_heading and len(self.passage.headings) > 1
        tier = 0 if own else 1 if entity in self.in_headings else 2
        return (tier, entity not in self.in_text, len(self.entities), self.passage.locator, self.passage.line)


@dataclass(frozen=True, slots=True)
class CitedPassage:
    """A passage chosen for an answer, and the entity on the answer's path it was chosen for."""

    entity: str
    passage: Passage

    @property
    def locator(self) -> str:
        return self.passage.locator

    @property
    def text(self) -> str:
        return self.passage.text


class NameScanner:
    """Finds the entities a text names, by the canonical keys of the alias index."""

    __slots__ = ("_keys", "_prefixes", "_starts", "_weak")

    def __init__(self, aliases: AliasIndex) -> None:
        keys: dict[str, frozenset[str]] = {}
        weak: dict[str, frozenset[str]] = {}
        prefixes: set[str] = set()
        for key, refs in aliases.tier("canonical").items():
            spaces = key.count(" ")
            if spaces >= MAX_NAME_WORDS:
                continue
            if not spaces and (len(key) < 2 or key.isdigit()):
                # "svc-42" is "42" once canonical: a number alone would name half of every runbook,
                # so it only counts beside the affix it lost ("svc 42", "42 service").
                weak[key] = refs
                continue
            keys[key] = refs
            prefix = key
            while (cut := prefix.rfind(" ")) > 0:
                prefix = prefix[:cut]
                prefixes.add(prefix)
        self._keys: Mapping[str, frozenset[str]] = keys
        self._weak: Mapping[str, frozenset[str]] = weak
        self._prefixes = frozenset(prefixes)
        self._starts = frozenset(keys) | self._prefixes | frozenset(weak)

    def names(self, text: str) -> frozenset[str]:
        """Entities named in `text`, longest match first; a name claimed by several entities is skipped."""
        words = prose_words(text)
        found: set[str] = set()
        keys, prefixes, weak, starts = self._keys, self._prefixes, self._weak, self._starts
        i, count = 0, len(words)
        while i < count:
            if words[i] not in starts:  # most words begin no name: one set lookup each
                i += 1
                continue
            key, end, matched, refs = words[i], i + 1, 0, None
            while True:
                hit = keys.get(key)
                if hit:
                    matched, refs = end, hit
                if end >= count or end - i >= MAX_NAME_WORDS or key not in prefixes:
                    break
                key = f"{key} {words[end]}"
                end += 1
            if not matched and words[i] in weak and _beside_affix(words, i):
                matched, refs = i + 1, weak[words[i]]
            if refs is not None and len(refs) == 1:
                found |= refs
            i = matched or i + 1
        return frozenset(found)


def prose_words(text: str) -> list[str]:
    """The words of prose as `graph.naming.names.name_words` cuts a name, markup dropped; faster on long text:
    CamelCase is looked for only in the words that have a capital after their first letter."""
    words: list[str] = []
    for word in _SPLIT.split(unicodedata.normalize("NFKC", text)):
        if not word:
            continue
        tail = word[1:]
        if tail != tail.lower():
            words += [w for w in _CAMEL.sub(" ", word).casefold().split(" ") if w]
        else:
            words.append(word.casefold())
    return words


def _beside_affix(words: list[str], i: int) -> bool:
    return (i > 0 and words[i - 1] in AFFIXES) or (i + 1 < len(words) and words[i + 1] in AFFIXES)


class PassageIndex:
    """Every passage with its links, and each entity's passages ranked best first."""

    __slots__ = ("_by_entity", "linked")

    def __init__(self, linked: Sequence[LinkedPassage]) -> None:
        self.linked = tuple(linked)
        grouped: dict[str, list[LinkedPassage]] = defaultdict(list)
        for item in self.linked:
            for entity in item.entities:
                grouped[entity].append(item)
        self._by_entity: Mapping[str, tuple[LinkedPassage, ...]] = MappingProxyType(
            {entity: _ranked(entity, items) for entity, items in grouped.items()}
        )

    def for_entity(self, entity: str) -> tuple[LinkedPassage, ...]:
        return self._by_entity.get(entity, ())


def _ranked(entity: str, items: list[LinkedPassage]) -> tuple[LinkedPassage, ...]:
    return tuple(sorted(items, key=lambda item: item.rank_for(entity)))


def passage_index(snapshot: Snapshot) -> PassageIndex:
    """The snapshot's runbook passages linked to the entities they name: built on first use, once per graph."""
    index: PassageIndex | None = snapshot.derived.get(_PASSAGE_INDEX)
    if index is None:
        index = snapshot.derived[_PASSAGE_INDEX] = index_passages(snapshot.passages, snapshot.aliases)
    return index


def passages_for(snapshot: Snapshot, ref: str) -> tuple[Passage, ...]:
    """Passages naming `ref`, best first: named in their heading, then the most specific."""
    return tuple(linked.passage for linked in passage_index(snapshot).for_entity(ref))


def index_passages(passages: Iterable[Passage], aliases: AliasIndex) -> PassageIndex:
    """Link each passage to the entities named in its headings and in its prose (code left out)."""
    passages = tuple(passages)
    if not passages:
        return PassageIndex(())  # a graph without runbooks never pays for the name scanner
    scanner = NameScanner(aliases)
    headings: dict[str, frozenset[str]] = {}  # many passages share a heading: scan each once

    def heading_names(title: str) -> frozenset[str]:
        found = headings.get(title)
        if found is None:
            found = headings[title] = scanner.names(title)
        return found

    linked = []
    for passage in passages:
        in_heading = heading_names(passage.heading) if passage.heading else frozenset[str]()
        in_headings = frozenset().union(*(heading_names(h) for h in passage.headings)) | in_heading
        in_text = scanner.names(prose(passage.text))
        entities = in_headings | in_text
        if entities:
            linked.append(LinkedPassage(passage, entities, in_heading, in_headings, in_text))
    return PassageIndex(linked)


def prose(text: str) -> str:
    """`text` without its fenced code blocks."""
    kept: list[str] = []
    fence = ""
    for line in text.split("\n"):
        marker = _FENCE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = ""
        elif marker:
            fence = marker.group(1)
        else:
            kept.append(line)
    return "\n".join(kept)


def cite_passages(
    snapshot: Snapshot, entities: Sequence[str], *, limit: int = DEFAULT_LIMIT, viewer: Viewer = EVERYONE
) -> tuple[CitedPassage, ...]:
    """The passages to quote for an answer about `entities` (most important first), at most `limit`.

    The k-th passage of the i-th entity comes in at step i + k, so the first entity (what was asked
    about) leads and the next ones still get a word in. One passage per section; a passage whose
    file, sections or text name an entity this viewer may not see (by any alias, even one it shares
    with a visible entity) is never shown to them.
    """
    index = passage_index(snapshot)
    hidden = hidden_from(snapshot, viewer)
    candidates: list[tuple[int, int, str, LinkedPassage]] = []
    for position, entity in enumerate(dict.fromkeys(entities)):
        # A few spare ones per entity: some may share a section or name an entity hidden here.
        for rank, item in enumerate(index.for_entity(entity)[: limit * 4]):
            candidates.append((position + rank, position, entity, item))
    candidates.sort(key=lambda c: (c[0], c[1]))
    chosen: list[CitedPassage] = []
    sections: set[str] = set()
    for _, _, entity, item in candidates:
        if len(chosen) == limit:
            break
        if item.passage.locator in sections:
            continue
        if hidden and (item.entities & hidden or passage_hidden(snapshot, item.passage, viewer)):
            continue
        sections.add(item.passage.locator)
        chosen.append(CitedPassage(entity, item.passage))
    return tuple(chosen)


def top_passages(
    snapshot: Snapshot, entities: Sequence[str], limit: int = DEFAULT_LIMIT, *, viewer: Viewer = EVERYONE
) -> tuple[Passage, ...]:
    """The passages to put beside an answer about `entities`, best first (see `cite_passages`)."""
    return tuple(c.passage for c in cite_passages(snapshot, entities, limit=limit, viewer=viewer))


def snippet(passage: Passage, limit: int = SNIPPET_CHARS) -> str:
    """The passage's prose on one line, cut at a word within `limit` characters."""
    text = " ".join(prose(passage.text).split()) or " ".join(passage.text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[: cut if cut > limit // 2 else limit - 1].rstrip(" ,;:") + "…"

"""Names: canonical forms, the alias index, and resolution with ranked suggestions.

Resolution is tiered so that exact matches always beat looser ones, and fuzzy matching only ever
suggests, never resolves:
  1. exact: the full ref, `namespace/name`, the name, or a claimed alias, as typed (case-folded);
  2. canonical: articles, separators, CamelCase and "svc"/"service" affixes normalized away;
  3. loose: canonical with plural words made singular;
  then ranked suggestions (`graph.naming.suggest`) for anything that did not resolve.
A key claimed by two entities in the first tier that matches is ambiguous: both are returned.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import compress
from operator import is_not, itemgetter
from types import MappingProxyType

from graph.background import stepping
from graph.naming.suggest import Choices, loosely, query_words, rank

ARTICLES = frozenset({"the", "a", "an"})
AFFIXES = frozenset({"svc", "srv", "service"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s\-_./:'\"`,;!?()\[\]{}]+")
_SINGULAR_EXCEPTIONS = ("ss", "us", "is", "os", "as")


def exact_key(text: str) -> str:
    """The name as typed, normalized only for Unicode form, case and surrounding space."""
    return unicodedata.normalize("NFKC", text).strip().casefold()


def canonical(text: str) -> str:
    """Canonical form: "The Auth Service", "AuthService", "auth_service", "svc-auth" -> "auth".

    Idempotent: canonical(canonical(x)) == canonical(x).
    """
    words = canonical_words(text)
    return " ".join(words)


def canonical_words(text: str) -> list[str]:
    return trim_words(name_words(text))


def name_words(text: str) -> list[str]:
    """The words of `text` as names are compared: CamelCase split, case-folded, separators dropped."""
    if text.isascii() and text.islower():
        # Most names are plain (`svc-00123`, `payments-api`): ASCII has nothing to normalize, and
        # without a capital there is no CamelCase to split and nothing to fold (a test keeps the
        # two paths equal).
        return [w for w in _SEPARATORS.split(text) if w]
    return _unicode_name_words(text)


def _unicode_name_words(text: str) -> list[str]:
    spaced = _CAMEL.sub(" ", unicodedata.normalize("NFKC", text))
    return [w for w in _SEPARATORS.split(spaced.casefold()) if w]


def trim_words(words: list[str]) -> list[str]:
    """Leading articles and "svc"/"service" affixes removed, never the last word."""
    changed = True
    while changed and len(words) > 1:
        before = len(words)
        if words[0] in ARTICLES:
            words = words[1:]
        if len(words) > 1 and words[0] in AFFIXES:
            words = words[1:]
        if len(words) > 1 and words[-1] in AFFIXES:
            words = words[:-1]
        changed = len(words) != before
    return words


def loose(text: str) -> str:
    """Canonical form with plural words made singular ("payments api" -> "payment api")."""
    words = canonical_words(text)
    return _loose_key(words, " ".join(words))


def _loose_key(words: list[str], canonical_key: str) -> str:
    # Only a word ending in "s" has a singular to take, and most keys have none: skip the join.
    if "s" not in canonical_key:
        return canonical_key
    return " ".join(_singular(w) for w in words)


def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(_SINGULAR_EXCEPTIONS) or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s"):
        return word[:-1]
    return word


def slug(text: str) -> str:
    """Name for a placeholder ref: "the token cache" -> "token-cache" (articles dropped only)."""
    spaced = _CAMEL.sub(" ", unicodedata.normalize("NFKC", text))
    words = [w for w in _SEPARATORS.split(spaced.casefold()) if w]
    while len(words) > 1 and words[0] in ARTICLES:
        words = words[1:]
    return "-".join(words) or "unnamed"


Allow = Callable[[str], bool]
TIERS: tuple[tuple[str, Callable[[str], str]], ...] = (("exact", exact_key), ("canonical", canonical), ("loose", loose))


@dataclass(frozen=True, slots=True)
class Resolution:
    """The answer to "which entity is this name?": one entity, several candidates, or none."""

    query: str
    entity: str | None
    candidates: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    matched_by: str = ""

    @property
    def ambiguous(self) -> bool:
        return self.entity is None and len(self.candidates) > 1


@dataclass(frozen=True, slots=True)
class AliasCollision:
    key: str
    tier: str
    refs: tuple[str, ...]


class AliasIndex:
    """Names and aliases of every entity, by tier. Built once per snapshot; read-only after.

    The exact tier is built with the index. The canonical and loose tiers, which normalize every
    name, are built on first need, once, under a lock (many threads read one snapshot): a name
    typed exactly, as most are, is answered without them (bench: 0.7 s of a 100k-entity restart).
    """

    __slots__ = ("_exact", "_fuzzy", "_lock", "_looser", "_names")

    def __init__(self, names: Iterable[tuple[str, str]], exact: Iterable[tuple[str, str]] = ()) -> None:
        """`names` yields (name or alias, entity ref) pairs matched at every tier; `exact` yields
        identifiers (refs, `namespace/name`) that only ever match as typed."""
        named, identifiers = list(names), list(exact)
        texts, refs = list(map(_TEXT, named)), list(map(_REF, named))
        ones = {ref: frozenset((ref,)) for ref in dict.fromkeys([*refs, *map(_REF, identifiers)])}
        key_of = {text: exact_key(text) for text in stepping(dict.fromkeys(texts))}
        exact_keys, exact_refs = _keyed(list(map(key_of.__getitem__, texts)), refs)
        exact_keys += map(exact_key, map(_TEXT, stepping(identifiers)))  # taken as they are, even when empty
        exact_refs += map(_REF, identifiers)
        self._exact: Mapping[str, frozenset[str]] = MappingProxyType(_tier(exact_keys, exact_refs, ones))
        self._names: tuple[list[str], list[str], dict[str, frozenset[str]]] | None = (texts, refs, ones)
        self._looser: _LooserTiers | None = None
        self._lock = threading.Lock()
        self._fuzzy: tuple[Choices, tuple[tuple[str, ...], ...]] | None = None

    def _looser_tiers(self) -> _LooserTiers:
        if self._looser is not None:
            return self._looser
        with self._lock:
            if self._looser is None:
                assert self._names is not None  # dropped only once the looser tiers exist
                self._looser, self._names = _looser_tiers(*self._names), None
            return self._looser

    def _fuzzy_choices(self) -> tuple[Choices, tuple[tuple[str, ...], ...]]:
        """(the canonical keys, their refs sorted), in the order the names came: what suggestions rank.

        Built on the first suggestion, not with the index: most graphs are built and answer
        without one (bench: 0.2 s of a 100k build). Safe across threads: every builder computes
        the same tuples and publishes them with one assignment.
        """
        if self._fuzzy is None:
            suggestable = self._looser_tiers().suggestable
            self._fuzzy = (Choices(tuple(suggestable)), tuple(tuple(sorted(refs)) for refs in suggestable.values()))
        return self._fuzzy

    @staticmethod
    def _allowed(positions: list[int], refs: tuple[tuple[str, ...], ...], allow: Allow | None) -> list[str]:
        ranked: list[str] = []
        for position in positions:
            for ref in refs[position]:
                if ref not in ranked and (allow is None or allow(ref)):
                    ranked.append(ref)
        return ranked

    def lookup(self, text: str, allow: Allow | None = None) -> tuple[str, frozenset[str]]:
        """(tier, refs) of the first tier where `text` matches an allowed entity; ("", empty) if none."""
        for tier, keyfn in TIERS:
            refs = self.tier(tier).get(keyfn(text), frozenset())
            if allow is not None:
                refs = frozenset(r for r in refs if allow(r))
            if refs:
                return tier, refs
        return "", frozenset()

    def tier(self, name: str) -> Mapping[str, frozenset[str]]:
        """Every key of one tier ("exact", "canonical", "loose") and the refs it names (read-only)."""
        if name == "exact":
            return self._exact
        if name == "canonical":
            return self._looser_tiers().canonical
        if name == "loose":
            return self._looser_tiers().loose
        raise KeyError(name)

    def names_one(self, text: str) -> bool:
        """True when `text` resolves to exactly one entity; cheaper than `resolve` for a miss,
        which would also rank fuzzy suggestions."""
        return len(self.lookup(text)[1]) == 1

    def collisions(self) -> tuple[AliasCollision, ...]:
        """Keys claimed by more than one entity, in the tiers where they would be looked up."""
        found: list[AliasCollision] = []
        for tier, _ in TIERS:
            for key, refs in self.tier(tier).items():
                if len(refs) > 1:
                    found.append(AliasCollision(key, tier, tuple(sorted(refs))))
        return tuple(sorted(found, key=lambda c: (c.key, c.tier)))

    def suggest(
        self, text: str, *, limit: int = 5, cutoff: float = 60.0, allow: Allow | None = None, loose: bool = True
    ) -> tuple[str, ...]:
        """Refs whose names look like `text`, best first; suggestions only, never a resolution.

        Ranked by `graph.naming.suggest`: edits (a transposition is one) blended with shared words, 0-100.
        """
        words = query_words(canonical_words(text))
        choices, fuzzy_refs = self._fuzzy_choices()
        ranked: list[str] = []
        positions = rank(words, choices, limit=limit * 3, cutoff=cutoff)
        ranked = self._allowed(positions, fuzzy_refs, allow)
        if not ranked and loose and (key := canonical(text)):
            # Nothing within a few edits: the looser whole-name likeness (WRatio), as suggestions always were.
            ranked = self._allowed(loosely(key, choices, limit=limit * 3, cutoff=cutoff), fuzzy_refs, allow)
        return tuple(ranked[:limit])


# Field getters that run in C: of a (text, ref) pair, of a _looser_keys() pair.
_TEXT, _REF = itemgetter(0), itemgetter(1)
_CANONICAL, _LOOSE = itemgetter(0), itemgetter(1)


@dataclass(frozen=True, slots=True)
class _LooserTiers:
    canonical: Mapping[str, frozenset[str]]
    loose: Mapping[str, frozenset[str]]
    suggestable: Mapping[str, frozenset[str]]  # canonical, with the empty key of a name all separators


def _looser_tiers(texts: list[str], refs: list[str], ones: dict[str, frozenset[str]]) -> _LooserTiers:
    """The canonical and loose tiers of the names `texts` of `refs` (`ones[ref]`: the frozenset of `ref`)."""
    # One normalization per distinct text (bench: a third of a 100k build was here).
    keys_of = {text: _looser_keys(text) for text in stepping(dict.fromkeys(texts))}
    keys = list(map(keys_of.__getitem__, texts))
    suggestable = _tier(list(map(_CANONICAL, keys)), refs, ones)
    canonical = {key: claimants for key, claimants in suggestable.items() if key} if "" in suggestable else suggestable
    loose = _tier(*_keyed(list(map(_LOOSE, keys)), refs), ones)
    return _LooserTiers(MappingProxyType(canonical), MappingProxyType(loose), MappingProxyType(suggestable))


def _looser_keys(text: str) -> tuple[str, str]:
    """The canonical and loose keys of a name."""
    words = canonical_words(text)
    canonical_key = " ".join(words)
    return canonical_key, _loose_key(words, canonical_key)


def _keyed(keys: list[str], refs: list[str]) -> tuple[list[str], list[str]]:
    """The (keys, refs) of the claims whose key is not empty."""
    return list(compress(keys, keys)), list(compress(refs, keys))


def _tier(keys: list[str], refs: list[str], ones: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """Each key (first claimed first) and the refs claiming it; `ones[ref]` is the frozenset of `ref`.

    Built with dict operations that run in C: a Python loop over the 800k claims of a 100k-entity
    graph cost a second, and a set and a frozenset per key were a million objects. Nearly every
    key has one claimant, whose one frozenset all its keys share.
    """
    claims = list(map(ones.__getitem__, refs))
    tier = dict(zip(keys, claims, strict=True))  # the last claim of each key: checked next
    if any(map(is_not, map(tier.__getitem__, keys), claims)):  # some keys are claimed by several refs
        contested = {key for key, one in zip(keys, claims, strict=True) if tier[key] is not one}
        claimants: dict[str, set[str]] = {key: set() for key in contested}
        for key, ref in compress(zip(keys, refs, strict=True), map(contested.__contains__, keys)):
            claimants[key].add(ref)
        tier.update((key, frozenset(refs)) for key, refs in claimants.items())
    return tier


def resolve(index: AliasIndex, text: str, *, limit: int = 5, allow: Allow | None = None) -> Resolution:
    """Resolve `text` to one entity; ambiguity returns every candidate, a miss returns suggestions.

    `allow` hides entities from this caller entirely: they neither resolve nor are suggested.
    """
    found = match(index, text, allow=allow)
    if found.entity is not None or found.candidates:
        return found
    return Resolution(text, None, suggestions=index.suggest(text, limit=limit, allow=allow))


def match(index: AliasIndex, text: str, *, allow: Allow | None = None) -> Resolution:
    """`resolve` without suggestions for a miss, for callers that never show them: ranking them
    over 100k names costs 0.2-0.3 s a miss (a graph build meets a miss per unresolved name)."""
    tier, refs = index.lookup(text, allow)
    if len(refs) == 1:
        return Resolution(text, next(iter(refs)), matched_by=tier)
    if refs:
        ordered = tuple(sorted(refs))
        return Resolution(text, None, candidates=ordered, suggestions=ordered, matched_by=tier)
    return Resolution(text, None)

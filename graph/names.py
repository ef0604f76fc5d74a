"""Names: canonical forms, the alias index, and resolution with ranked suggestions.

Resolution is tiered so that exact matches always beat looser ones, and fuzzy matching only ever
suggests, never resolves:
  1. exact: the full ref, `namespace/name`, the name, or a claimed alias, as typed (case-folded);
  2. canonical: articles, separators, CamelCase and "svc"/"service" affixes normalized away;
  3. loose: canonical with plural words made singular;
  then rapidfuzz suggestions for anything that did not resolve.
A key claimed by two entities in the first tier that matches is ambiguous: both are returned.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rapidfuzz import fuzz, process

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
    return " ".join(_singular(w) for w in canonical_words(text))


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
    """Names and aliases of every entity, by tier. Built once per snapshot; read-only after."""

    __slots__ = ("_fuzzy_keys", "_fuzzy_refs", "_tiers")

    def __init__(self, names: Iterable[tuple[str, str]], exact: Iterable[tuple[str, str]] = ()) -> None:
        """`names` yields (name or alias, entity ref) pairs matched at every tier; `exact` yields
        identifiers (refs, `namespace/name`) that only ever match as typed."""
        tiers: dict[str, dict[str, set[str]]] = {tier: {} for tier, _ in TIERS}
        fuzzy: dict[str, set[str]] = {}
        seen: dict[str, tuple[str, str, str]] = {}
        for text, ref in names:
            keys = seen.get(text)
            if keys is None:
                # One normalization per distinct text (bench: a third of a 100k build was here).
                words = canonical_words(text)
                keys = seen[text] = (exact_key(text), " ".join(words), " ".join(_singular(w) for w in words))
            for (tier, _), key in zip(TIERS, keys, strict=True):
                if key:
                    tiers[tier].setdefault(key, set()).add(ref)
            fuzzy.setdefault(keys[1], set()).add(ref)
        for text, ref in exact:
            tiers["exact"].setdefault(exact_key(text), set()).add(ref)
        self._tiers: Mapping[str, Mapping[str, frozenset[str]]] = MappingProxyType(
            {t: MappingProxyType({k: frozenset(v) for k, v in keys.items()}) for t, keys in tiers.items()}
        )
        self._fuzzy_keys = tuple(fuzzy)
        self._fuzzy_refs = tuple(tuple(sorted(fuzzy[k])) for k in self._fuzzy_keys)

    def lookup(self, text: str, allow: Allow | None = None) -> tuple[str, frozenset[str]]:
        """(tier, refs) of the first tier where `text` matches an allowed entity; ("", empty) if none."""
        for tier, keyfn in TIERS:
            refs = self._tiers[tier].get(keyfn(text), frozenset())
            if allow is not None:
                refs = frozenset(r for r in refs if allow(r))
            if refs:
                return tier, refs
        return "", frozenset()

    def tier(self, name: str) -> Mapping[str, frozenset[str]]:
        """Every key of one tier ("exact", "canonical", "loose") and the refs it names (read-only)."""
        return self._tiers[name]

    def names_one(self, text: str) -> bool:
        """True when `text` resolves to exactly one entity; cheaper than `resolve` for a miss,
        which would also rank fuzzy suggestions."""
        return len(self.lookup(text)[1]) == 1

    def collisions(self) -> tuple[AliasCollision, ...]:
        """Keys claimed by more than one entity, in the tiers where they would be looked up."""
        found: list[AliasCollision] = []
        for tier, keys in self._tiers.items():
            for key, refs in keys.items():
                if len(refs) > 1:
                    found.append(AliasCollision(key, tier, tuple(sorted(refs))))
        return tuple(sorted(found, key=lambda c: (c.key, c.tier)))

    def suggest(
        self, text: str, *, limit: int = 5, cutoff: float = 60.0, allow: Allow | None = None
    ) -> tuple[str, ...]:
        """Refs whose names look like `text`, best first; suggestions only, never a resolution."""
        key = canonical(text)
        if not key or not self._fuzzy_keys:
            return ()
        hits = process.extract(key, self._fuzzy_keys, scorer=fuzz.WRatio, limit=limit * 3, score_cutoff=cutoff)
        ranked: list[str] = []
        for _key, _score, position in hits:
            for ref in self._fuzzy_refs[position]:
                if ref not in ranked and (allow is None or allow(ref)):
                    ranked.append(ref)
        return tuple(ranked[:limit])


def resolve(index: AliasIndex, text: str, *, limit: int = 5, allow: Allow | None = None) -> Resolution:
    """Resolve `text` to one entity; ambiguity returns every candidate, a miss returns suggestions.

    `allow` hides entities from this caller entirely: they neither resolve nor are suggested.
    """
    tier, refs = index.lookup(text, allow)
    if len(refs) == 1:
        return Resolution(text, next(iter(refs)), matched_by=tier)
    if refs:
        ordered = tuple(sorted(refs))
        return Resolution(text, None, candidates=ordered, suggestions=ordered, matched_by=tier)
    return Resolution(text, None, suggestions=index.suggest(text, limit=limit, allow=allow))

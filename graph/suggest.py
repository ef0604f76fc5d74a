"""Ranking suggestions for a name that matched nothing: edits and shared words, blended.

A typo in a long name is one or two edits (a transposed pair counts as one, as people make it:
`travle`), so the edit measure is the optimal string alignment distance over the name's letters
with separators removed (`insidepayment` and `inside-payment` are the same letters). Shared
words break ties and lift a name typed with its words in another order. A misspelt affix
(`servcie`, `srvice`) is trimmed like `service` is, so it costs nothing against a name whose
affix the canonical form already dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz import process
from rapidfuzz.distance import OSA

EDIT_WEIGHT = 0.75  # the rest is word overlap
SHORTLIST = 40  # names ranked by edits alone before the blend re-ranks them


def _near_affix(word: str) -> bool:
    return len(word) >= 5 and OSA.distance(word, "service", score_cutoff=2) <= 2


def query_words(words: Sequence[str]) -> list[str]:
    """The canonical words of a typed name, with misspelt affixes at either end trimmed (never the last word)."""
    kept = list(words)
    while len(kept) > 1 and _near_affix(kept[-1]):
        kept.pop()
    while len(kept) > 1 and _near_affix(kept[0]):
        kept.pop(0)
    return kept


def compact(key: str) -> str:
    """A canonical key's letters without its word breaks."""
    return key.replace(" ", "")


def word_overlap(words: Sequence[str], key_words: Sequence[str]) -> float:
    if not words or not key_words:
        return 0.0
    return len(set(words) & set(key_words)) / max(len(set(words)), len(set(key_words)))


def blended(words: Sequence[str], key: str) -> float:
    """0-100: how much `key` (a canonical key) looks like the typed `words`."""
    edits = OSA.normalized_similarity("".join(words), compact(key))
    return 100 * (EDIT_WEIGHT * edits + (1 - EDIT_WEIGHT) * word_overlap(words, key.split(" ")))


def rank(words: Sequence[str], keys: Sequence[str], compacts: Sequence[str], *, limit: int, cutoff: float) -> list[int]:
    """Positions in `keys` of the best `limit` matches scoring at least `cutoff`, best first (ties: first key)."""
    if not words or not keys:
        return []
    typed = "".join(words)
    # A blend reaching `cutoff` needs at least this much from edits (overlap gives at most the rest).
    floor = max(0.0, (cutoff / 100 - (1 - EDIT_WEIGHT)) / EDIT_WEIGHT)
    hits = process.extract(
        typed, compacts, scorer=OSA.normalized_similarity, processor=None, limit=max(SHORTLIST, limit), score_cutoff=floor
    )
    scored = [(blended(words, keys[at]), at) for _, _, at in hits]
    kept = sorted((item for item in scored if item[0] >= cutoff), key=lambda item: (-item[0], item[1]))
    return [at for _, at in kept[:limit]]

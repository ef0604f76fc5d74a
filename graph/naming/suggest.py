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

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA, Indel

EDIT_WEIGHT = 0.75  # the rest is word overlap
SHORTLIST = 40  # names ranked by edits alone before the blend re-ranks them
FULL_SCAN = 20_000  # up to this many keys every one is scored; above, the trigram shortlist
GRAM = 3
GRAM_SHORTLIST = 2_000  # keys sharing the most trigrams with the typed name, scored by edits
LOOSE_SHORTLIST = 300  # above FULL_SCAN: keys nearest by Indel, re-ranked by the looser WRatio


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


class Choices:
    """The canonical keys suggestions rank, their letters, and (for large graphs) a trigram index.

    Scanning every key costs 50 ms at 100k entities (180k keys); a typo of one or two edits keeps
    most of a name's trigrams, so the keys sharing the most trigrams with the typed name are a
    shortlist that holds it (bench/typos_bench.py measures the recall).
    """

    __slots__ = ("_by_length", "_grams", "_sizes", "compacts", "keys")

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = tuple(keys)
        self.compacts = tuple(map(compact, self.keys))
        self._grams: dict[str, npt.NDArray[np.int32]] | None = None
        self._sizes: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._by_length: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None

    def of_length(self, shortest: float, longest: float) -> npt.NDArray[np.int64]:
        """Positions of the keys whose letters number from `shortest` to `longest`, in order."""
        if self._by_length is None:
            lengths = np.fromiter(map(len, self.compacts), dtype=np.int64, count=len(self.compacts))
            order = np.argsort(lengths, kind="stable")
            self._by_length = (order, lengths[order])
        order, lengths = self._by_length
        start, stop = np.searchsorted(lengths, [shortest, longest + 1e-9], side="left")
        return np.sort(order[start:stop])

    def candidates(self, typed: str) -> npt.NDArray[np.int64] | None:
        """Positions worth scoring for `typed`, or None to score every key (small graphs, short names).

        Ranked by the share of trigrams the two have in common (Jaccard), not by the count: a short
        name's trigrams are all inside thousands of longer names built from the same words
        (`device-queue` in every `device-queue-*`), and by count those crowd the name itself out of
        the shortlist, leaving nothing within a few edits and the caller to scan every key.
        """
        if len(self.keys) <= FULL_SCAN or len(typed) < GRAM + 1:
            return None
        grams = self._gram_index()
        typed_grams = _grams(typed)
        hits = [grams[g] for g in typed_grams if g in grams]
        if not hits:
            return np.empty(0, dtype=np.int64)
        counts = np.bincount(np.concatenate(hits), minlength=len(self.keys))
        shared = np.flatnonzero(counts)
        if len(shared) <= GRAM_SHORTLIST:
            return shared
        common = counts[shared]
        likeness = common / (self._sizes[shared] + len(typed_grams) - common)
        best = np.argpartition(-likeness, GRAM_SHORTLIST)[:GRAM_SHORTLIST]
        return np.sort(shared[best])

    def _gram_index(self) -> dict[str, npt.NDArray[np.int32]]:
        # Built on the first suggestion of a large graph, once; threads building it at once build the same.
        if self._grams is None:
            postings: dict[str, list[int]] = {}
            sizes = np.zeros(len(self.compacts), dtype=np.int32)
            for position, letters in enumerate(self.compacts):
                own = _grams(letters)
                sizes[position] = len(own)
                for gram in own:
                    postings.setdefault(gram, []).append(position)
            self._sizes = sizes
            self._grams = {gram: np.array(found, dtype=np.int32) for gram, found in postings.items()}
        return self._grams


def _grams(letters: str) -> set[str]:
    return {letters[i : i + GRAM] for i in range(len(letters) - GRAM + 1)}


def rank(words: Sequence[str], choices: Choices, *, limit: int, cutoff: float) -> list[int]:
    """Positions in `choices.keys` of the best `limit` matches scoring at least `cutoff`, best first
    (ties: the first key)."""
    if not words or not choices.keys:
        return []
    found = _rank_phrase(words, choices, limit=limit, cutoff=cutoff)
    if found or len(words) == 1:
        return found
    # Nothing like the whole: a name typed with other words around it ("Paymnts Gateway"), each part alone.
    parts = [words[i:j] for i in range(len(words)) for j in range(i + 1, min(len(words), i + 3) + 1)]
    scored: dict[int, int] = {}
    for part in parts:
        if len(part) < len(words):
            for rank_at, at in enumerate(_rank_phrase(part, choices, limit=limit, cutoff=cutoff)):
                scored[at] = min(scored.get(at, rank_at), rank_at)
    return sorted(scored, key=lambda at: (scored[at], at))[:limit]


def _rank_phrase(words: Sequence[str], choices: Choices, *, limit: int, cutoff: float) -> list[int]:
    typed = "".join(words)
    # A blend reaching `cutoff` needs at least this much from edits (overlap gives at most the rest).
    floor = max(0.0, (cutoff / 100 - (1 - EDIT_WEIGHT)) / EDIT_WEIGHT)
    shortlist = choices.candidates(typed)
    if shortlist is None and len(choices.keys) > FULL_SCAN and floor > 0:
        # A short name scans every key: only keys within reach of `floor` by length alone can score
        # (a similarity of `floor` allows at most (1 - floor) * the longer length in edits).
        shortlist = choices.of_length(len(typed) * floor, len(typed) / floor)
    if shortlist is None:
        pool: Sequence[str] = choices.compacts
        positions: Sequence[int] = range(len(pool))
    else:
        positions = shortlist.tolist()
        pool = [choices.compacts[at] for at in positions]
    hits = process.extract(
        typed, pool, scorer=OSA.normalized_similarity, processor=None, limit=max(SHORTLIST, limit), score_cutoff=floor
    )
    scored = [(blended(words, choices.keys[positions[at]]), positions[at]) for _, _, at in hits]
    kept = sorted((item for item in scored if item[0] >= cutoff), key=lambda item: (-item[0], item[1]))
    return [at for _, at in kept[:limit]]


def loosely(key: str, choices: Choices, *, limit: int, cutoff: float) -> list[int]:
    """Positions of the keys most like `key` (a canonical key) as a whole (WRatio), best first: the
    fallback when nothing is within a few edits.

    WRatio over every key costs 250-400 ms at 100k entities, so above FULL_SCAN it ranks only the
    keys nearest by Indel (one C pass, a sixth of that), which hold what WRatio would rank first
    for a mistyped name (bench/typos_bench.py measures the recall).
    """
    pool: Sequence[str] = choices.keys
    positions: Sequence[int] = range(len(pool))
    if len(pool) > FULL_SCAN:
        near = process.extract(key, pool, scorer=Indel.normalized_similarity, processor=None, limit=LOOSE_SHORTLIST)
        positions = sorted(at for _, _, at in near)
        pool = [choices.keys[at] for at in positions]
    hits = process.extract(key, pool, scorer=fuzz.WRatio, limit=limit, score_cutoff=cutoff)
    return [positions[at] for _, _, at in hits]

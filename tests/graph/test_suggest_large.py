"""Suggestions over a catalog larger than FULL_SCAN, where only shortlists are scored."""

from __future__ import annotations

import itertools

from graph.naming.suggest import FULL_SCAN, Choices, loosely, query_words, rank

WORDS = ("device", "queue", "search", "api", "offer", "team", "ledger", "voucher", "signup", "export")
SUFFIXES = [f"{a}{b}" for a, b in itertools.product("abcdefghijklmnopqrstuvwxyz", repeat=2)]


def _catalog() -> list[str]:
    """Two-word names, and thousands of longer names built from the same two words plus others."""
    pairs = [f"{a} {b}" for a, b in itertools.permutations(WORDS, 2)]
    longer = [f"{pair} {extra} {tail}" for pair in pairs for extra in WORDS[:4] for tail in SUFFIXES[:70]]
    keys = pairs + longer + ["api", "sso"]
    assert len(keys) > FULL_SCAN
    return keys


KEYS = _catalog()
CHOICES = Choices(KEYS)


def _suggest(typed: str, cutoff: float = 60.0) -> list[str]:
    return [KEYS[at] for at in rank(typed.split(" "), CHOICES, limit=5, cutoff=cutoff)]


def test_a_short_name_is_not_crowded_out_by_the_longer_names_holding_its_trigrams() -> None:
    # Every "device queue * *" holds all of "devicequeu"'s trigrams; ranked by count they fill the shortlist.
    assert _suggest("device queuz")[0] == "device queue"
    assert _suggest("serach api")[0] == "search api"
    assert _suggest("ofefr team")[0] == "offer team"


def test_a_name_too_short_for_trigrams_is_scored_against_the_keys_near_its_length() -> None:
    assert _suggest("apo", cutoff=40.0)[0] == "api"
    assert [len(KEYS[at].replace(" ", "")) for at in CHOICES.of_length(2, 3)] == [3, 3]
    assert query_words(["device", "queuz"]) == ["queuz"]  # why the index's own suggestion may fall back


def test_the_loose_fallback_ranks_the_indel_nearest_keys_by_wratio() -> None:
    found = [KEYS[at] for at in loosely("ledgr vouchre", CHOICES, limit=5, cutoff=60.0)]
    assert found[0] == "ledger voucher"
    assert loosely("zzzz qqqq", CHOICES, limit=5, cutoff=60.0) == []

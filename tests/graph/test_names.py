from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.naming.names import (
    TIERS,
    AliasIndex,
    _loose_key,
    _singular,
    _unicode_name_words,
    canonical,
    canonical_words,
    exact_key,
    loose,
    match,
    name_words,
    resolve,
    slug,
)
from graph.naming.suggest import blended, query_words

AUTH = "component:default/auth-service"


@pytest.mark.parametrize(
    "spelling", ["The Auth Service", "auth service", "AuthService", "auth_service", "auth-service", "svc-auth", "AUTH"]
)
def test_spellings_of_one_service_meet_in_one_canonical_form(spelling: str) -> None:
    assert canonical(spelling) == "auth"


def test_canonical_keeps_a_name_that_is_only_an_affix_or_article() -> None:
    assert canonical("service") == "service"
    assert canonical("the") == "the"


def test_loose_form_makes_plural_words_singular_but_not_redis() -> None:
    assert loose("payments api") == loose("Payment API")
    assert loose("redis") == "redis"
    assert loose("Kafka Topics") == "kafka topic"


def test_slug_turns_a_free_text_name_into_a_ref_name() -> None:
    assert slug("the token cache") == "token-cache"
    assert slug("AuthService") == "auth-service"


@given(st.text())
def test_canonicalization_is_idempotent(text: str) -> None:
    assert canonical(canonical(text)) == canonical(text)
    assert loose(loose(text)) == loose(text)


def index(*pairs: tuple[str, str]) -> AliasIndex:
    return AliasIndex(pairs)


def test_exact_name_resolves_before_canonical_collision() -> None:
    idx = index(("auth", "component:default/auth"), ("auth-service", AUTH))
    assert resolve(idx, "auth-service").entity == AUTH
    assert resolve(idx, "auth").entity == "component:default/auth"


def test_alias_claimed_by_two_entities_returns_both_candidates_and_no_entity() -> None:
    idx = index(("cache", "resource:default/redis"), ("cache", "resource:default/memcached"))
    result = resolve(idx, "cache")
    assert result.entity is None
    assert result.ambiguous
    assert result.candidates == ("resource:default/memcached", "resource:default/redis")


def test_unknown_name_gets_ranked_suggestions_never_a_guess() -> None:
    idx = index(("payments", "component:default/payments"), ("ledger", "component:default/ledger"))
    result = resolve(idx, "paymnts")
    assert result.entity is None
    assert result.suggestions[0] == "component:default/payments"
    assert "component:default/ledger" not in result.suggestions


def test_unicode_names_resolve() -> None:
    idx = index(("Zahlungsdienst-Über", "component:default/zahlung"))
    assert resolve(idx, "zahlungsdienst über").entity == "component:default/zahlung"


def test_names_one_agrees_with_resolve_on_hits_ambiguity_and_misses() -> None:
    index = AliasIndex([("auth-service", "component:default/auth"), ("cache", "resource:default/a"),
                        ("cache", "resource:default/b")])  # fmt: skip
    for text in ("The Auth Service", "cache", "nothing-like-it"):
        assert index.names_one(text) == (resolve(index, text).entity is not None)


# Names built from a few words and separators, so that keys collide, plus arbitrary text.
WORDS = ["the", "svc", "Service", "payments", "Payment", "API", "db", "00123", "ü", "İ", "ﬁ", "authService"]
SEPARATORS = ["-", "_", " ", ".", "--", "/"]
names = st.lists(st.sampled_from(WORDS + SEPARATORS), max_size=5).map("".join) | st.text(max_size=8)
plain_names = st.text(alphabet="abcdesy0129-_ ./:", max_size=16)
refs = st.sampled_from(["component:default/a", "component:default/b", "resource:default/c"])


@given(names | plain_names)
def test_the_fast_path_for_plain_names_finds_the_words_the_general_path_finds(text: str) -> None:
    assert name_words(text) == _unicode_name_words(text)
    words = canonical_words(text)
    assert _loose_key(words, " ".join(words)) == " ".join(_singular(w) for w in words)


def _reference_index(
    named: list[tuple[str, str]], exact: list[tuple[str, str]]
) -> tuple[dict[str, dict[str, set[str]]], dict[str, set[str]]]:
    """The tiers and suggestion keys, built the plain way: one key function call per pair."""
    tiers: dict[str, dict[str, set[str]]] = {tier: {} for tier, _ in TIERS}
    fuzzy: dict[str, set[str]] = {}
    for text, ref in named:
        for tier, key_of in TIERS:
            if key := key_of(text):
                tiers[tier].setdefault(key, set()).add(ref)
        fuzzy.setdefault(canonical(text), set()).add(ref)
    for text, ref in exact:
        tiers["exact"].setdefault(exact_key(text), set()).add(ref)
    return tiers, fuzzy


@given(st.lists(st.tuples(names | plain_names, refs), max_size=12), st.lists(st.tuples(names, refs), max_size=4))
def test_the_index_holds_every_claim_of_every_key_in_first_claimed_order(
    named: list[tuple[str, str]], exact: list[tuple[str, str]]
) -> None:
    index = AliasIndex(named, exact)
    tiers, fuzzy = _reference_index(named, exact)
    for tier, keys in tiers.items():
        assert list(index.tier(tier).items()) == [(key, frozenset(claimants)) for key, claimants in keys.items()]
    for query in [text for text, _ in named[:3]] + ["payment", "svc"]:
        words = query_words(canonical_words(query))
        order = sorted(range(len(fuzzy)), key=lambda at: (-blended(words, list(fuzzy)[at]), at))[:6]
        ranked = list(dict.fromkeys(ref for at in order for ref in sorted(list(fuzzy.values())[at])))
        expected = tuple(ranked[:2]) if words and fuzzy else ()
        assert index.suggest(query, limit=2, cutoff=0) == expected


def test_threads_meeting_an_unbuilt_canonical_tier_all_get_the_same_answer() -> None:
    """The canonical and loose tiers are built on first need, once, while other threads may ask."""
    pairs = [(f"The Payments {n}", f"component:default/payments-{n}") for n in range(2000)]
    index = AliasIndex(pairs)
    start = threading.Barrier(6)
    answers: list[tuple[str, frozenset[str]]] = []

    def ask() -> None:
        start.wait()
        answers.append(index.lookup("payments-1999"))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [("canonical", frozenset({"component:default/payments-1999"}))] * 6


def test_match_resolves_as_resolve_does_but_ranks_no_suggestions_for_a_miss() -> None:
    index = AliasIndex(
        [("auth-service", "component:default/auth"), ("Auth", "component:default/auth"),
         ("cache", "component:default/a-cache"), ("cache", "component:default/b-cache")]
    )  # fmt: skip
    for text in ("The Auth Service", "cache", "auth-servic", "nothing like it"):
        full, quick = resolve(index, text), match(index, text)
        assert (quick.entity, quick.candidates, quick.matched_by) == (full.entity, full.candidates, full.matched_by)
    assert resolve(index, "auth-servic").suggestions == ("component:default/auth",)
    assert match(index, "auth-servic").suggestions == ()


LONG_NAMES = ["ts-travel-service", "ts-travel-plan-service", "ts-travel2-service", "ts-inside-payment-service",
              "ts-payment-service", "ts-train-service", "ts-route-plan-service", "ts-admin-travel-service"]  # fmt: skip


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("ts-travle-servcie", "ts-travel-service"), ("ts-insidepayment-srvice", "ts-inside-payment-service"),
     ("ts-rotue-plan-service", "ts-route-plan-service"), ("ts-travel-plna-svc", "ts-travel-plan-service")],
)  # fmt: skip
def test_two_edit_typos_of_long_names_suggest_the_name_first(typed: str, meant: str) -> None:
    idx = index(*((name, f"component:default/{name}") for name in LONG_NAMES))
    assert resolve(idx, typed).suggestions[0] == f"component:default/{meant}"


def test_a_transposition_counts_as_one_edit() -> None:
    assert blended(["tstravle"], "ts travel") == blended(["tstravex"], "ts travel") > blended(["tstrvale"], "ts travel")

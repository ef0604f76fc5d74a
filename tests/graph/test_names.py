from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.names import AliasIndex, canonical, loose, resolve, slug

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

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.naming.refs import ref_parts, short_name

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./:", min_size=1, max_size=12)


@given(kind=WORDS.filter(lambda w: ":" not in w), namespace=WORDS.filter(lambda w: "/" not in w and ":" not in w),
       name=WORDS)  # fmt: skip
def test_short_name_agrees_with_the_parsed_ref(kind: str, namespace: str, name: str) -> None:
    ref = f"{kind}:{namespace}/{name}"
    parts = ref_parts(ref)
    expected = parts.name if parts.namespace == "default" else f"{parts.namespace}/{parts.name}"
    assert short_name(ref) == expected


def test_short_name_drops_only_the_default_namespace() -> None:
    assert short_name("component:default/auth-service") == "auth-service"
    assert short_name("component:payments/auth-service") == "payments/auth-service"
    assert short_name("resource:defaults/db") == "defaults/db"


def test_short_name_refuses_what_is_not_a_ref() -> None:
    with pytest.raises(ValueError):
        short_name("auth-service")

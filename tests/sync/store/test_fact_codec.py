"""The fact codec: round trips, stable keys across versions, one Citation object per citation."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from graph.facts import AliasClaim, Assertion, Citation, Deploy, Entity, Passage, Problem, SourceFacts
from sync.store.fact_codec import _row, decode_facts, encode_facts

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.text(), json_values, max_size=6))
def test_rows_are_written_exactly_as_the_json_module_wrote_them(payload: dict[str, object]) -> None:
    """Facts stored by earlier versions keep their payloads and keys: a re-sync must not retire and re-add them."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    row = _row("entity", payload)
    assert row.payload == text
    assert json.loads(row.payload) == payload
    assert row.key == hashlib.blake2b(b"entity\0" + text.encode(), digest_size=16).hexdigest()


def _facts() -> SourceFacts:
    doc = Citation("catalog:c", "c/checkout.yaml#1", origin="catalog", text="dependsOn: payments")
    when = datetime(2026, 11, 29, 14, 0, tzinfo=UTC)
    return SourceFacts(
        "catalog:c",
        entities=(Entity("component:default/checkout", "component", "checkout", doc, annotations={"a/b": "ü"}),),
        assertions=(
            Assertion("component:default/checkout", "depends_on", "component:default/payments", doc),
            Assertion("component:default/checkout", "owned_by", "group:default/shop", doc),
        ),
        deploys=(Deploy("r-1", "checkout", when, Citation("deploys:d", "d.jsonl:1"), version="1.2"),),
    )


def test_facts_survive_the_round_trip_and_share_their_citations() -> None:
    facts = _facts()
    rows = list(encode_facts(facts))
    decoded = decode_facts("catalog:c", [(r.kind, r.payload) for r in rows])
    assert decoded == facts
    citations = {id(decoded.entities[0].citation)} | {id(a.citation) for a in decoded.assertions}
    assert len(citations) == 1


def test_a_citations_url_survives_the_round_trip_and_its_absence_keeps_the_rows_of_before() -> None:
    linked = Citation("catalog:c", "c/a.yaml#1", origin="c/a.yaml#1", url="https://git.example.com/c/a.yaml")
    facts = SourceFacts("catalog:c", entities=(Entity("component:default/a", "component", "a", linked),))
    (row,) = encode_facts(facts)
    assert decode_facts("catalog:c", [(row.kind, row.payload)]) == facts
    # No URL: the citation is written as it was before citations had one, so its key is unchanged.
    (plain,) = encode_facts(replace(facts, entities=(replace(facts.entities[0], citation=replace(linked, url="")),)))
    assert json.loads(plain.payload)["citation"] == ["catalog:c", "c/a.yaml#1", "c/a.yaml#1"]


def test_equal_facts_get_equal_keys_and_different_facts_different_keys() -> None:
    first = [r.key for r in encode_facts(_facts())]
    assert first == [r.key for r in encode_facts(_facts())]
    assert len(set(first)) == len(first)


texts = st.text(max_size=6)
citations = st.builds(Citation, texts, texts, texts, texts, st.booleans())
annotations = st.dictionaries(texts, texts, max_size=2)
moments = st.datetimes(timezones=st.none() | st.just(UTC))
FACTS_BY_KIND = {
    Entity: st.builds(Entity, texts, texts, texts, citations, *[texts] * 7, annotations, st.booleans()),
    Assertion: st.builds(Assertion, texts, texts, texts, citations, st.booleans(), st.booleans(), texts, st.booleans()),
    Deploy: st.builds(Deploy, texts, texts, moments, citations, texts, texts, texts, texts, texts),
    AliasClaim: st.builds(AliasClaim, texts, texts, citations, st.booleans()),
    Problem: st.builds(Problem, texts, texts, texts, texts),
    Passage: st.builds(Passage, texts, texts, texts, texts, st.integers(0, 10**6), texts, st.lists(texts).map(tuple)),
}


@given(st.lists(st.one_of(*FACTS_BY_KIND.values()), max_size=8))
def test_every_field_of_every_kind_of_fact_survives_the_round_trip(facts: list[object]) -> None:
    """The decoder fills each fact's slots itself, not through __init__: every field must come back.

    Dataclass equality compares the class and every field (an unfilled slot would raise).
    """
    original = SourceFacts("s", *(tuple(f for f in facts if type(f) is cls) for cls in FACTS_BY_KIND))  # type: ignore[arg-type]
    decoded = decode_facts("s", [(r.kind, r.payload) for r in encode_facts(original)])
    assert decoded == original

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.facts import Assertion, SourceFacts
from graph.relations import propagates
from sync.sources.reading.textfiles import FetchError
from sync.sources.triples import normalize_relation, parse_triples, read_triples

DATA = Path(__file__).resolve().parents[2] / "data" / "triples"


def load(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def edges(facts: SourceFacts) -> list[tuple[str, str, str]]:
    return [(a.src, a.rel, a.dst) for a in facts.assertions]


def triple(**fields: object) -> str:
    base: dict[str, object] = {
        "subject": "checkout",
        "relation": "depends on",
        "object": "payments-api",
        "source_text": "Checkout depends on the payments API.",
    }
    return json.dumps([{**base, **fields}])


def test_triples_become_extracted_by_name_assertions() -> None:
    facts = parse_triples("kg", "triples.json", load("triples.json"))

    assert edges(facts) == [
        ("checkout", "depends_on", "payments-api"),
        ("payments-api", "backed_by", "postgres"),
        ("payments-api", "owned_by", "payments team"),
        ("antifraud", "publishes_to", "fraud-events"),
        ("token cache", "owned_by", "identity team"),
        ("auth-service", "uses", "token cache"),
        ("checkout", "runs_on", "kubernetes"),
        ("reporting", "mirrors", "payments-api"),
    ]
    assert all(a.by_name and a.citation.extracted for a in facts.assertions)
    assert all(a.citation.source == "kg" for a in facts.assertions)


def test_each_triple_is_cited_by_its_source_id_or_else_file_and_index() -> None:
    first, second = parse_triples("kg", "triples.json", load("triples.json")).assertions[:2]

    assert (first.citation.locator, first.citation.origin) == ("runbooks/checkout.md#3",) * 2
    assert (second.citation.locator, second.citation.origin) == ("triples.json#2",) * 2
    assert second.citation.text == "The payments API is backed by the postgres cluster pg-main."


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("DEPENDS_ON", ("depends_on", False)),
        ("depends on", ("depends_on", False)),
        ("Depends-On", ("depends_on", False)),
        ("dependsOn", ("depends_on", False)),
        ("depend on", ("depends_on", False)),
        ("is backed by", ("backed_by", False)),
        ("is owned by", ("owned_by", False)),
        ("owns", ("owned_by", True)),
        ("PUBLISHES_TO", ("publishes_to", False)),
        ("USES", ("uses", False)),
        ("  runs  on ", ("runs_on", False)),
        ("reads from", ("reads_from", False)),
        ("dependency of", ("depends_on", True)),
        ("Mirrors", ("mirrors", False)),
    ],
)
def test_relation_spellings_are_normalised(written: str, expected: tuple[str, bool]) -> None:
    assert normalize_relation(written) == expected


def test_owns_is_turned_around_into_owned_by() -> None:
    facts = parse_triples("kg", "t.json", triple(subject="payments team", relation="owns"))

    assert edges(facts) == [("payments-api", "owned_by", "payments team")]
    assert facts.problems == ()


def test_dependency_relations_propagate_failure_after_normalising() -> None:
    facts = parse_triples("kg", "triples.json", load("triples.json"))

    propagating = {a.rel for a in facts.assertions if propagates(a.rel)}
    assert propagating == {"depends_on", "backed_by", "publishes_to", "uses", "runs_on"}


def test_unknown_relation_is_kept_under_its_name_with_a_warning() -> None:
    facts = parse_triples("kg", "triples.json", load("triples.json"))

    assert ("reporting", "mirrors", "payments-api") in edges(facts)
    [warning] = facts.problems
    assert (warning.where, warning.field, warning.severity) == ("triples.json#8", "relation", "warning")
    assert "mirrors" in warning.message


def test_bad_elements_are_reported_with_file_index_and_field_and_the_rest_is_used() -> None:
    facts = parse_triples("kg", "broken.json", load("broken.json"))

    assert edges(facts) == [
        ("checkout", "depends_on", "payments-api"),
        ("billing", "calls", "payments-api"),
    ]
    assert [(p.where, p.field, p.severity) for p in facts.problems] == [
        ("broken.json#2", "", "error"),  # a string, not an object
        ("broken.json#3", "object", "error"),  # missing
        ("broken.json#4", "subject", "error"),  # empty
        ("broken.json#5", "relation", "error"),  # not a string
        ("broken.json#6", "relation", "error"),  # not an identifier
        ("broken.json#7", "object", "error"),  # relates to itself
        ("broken.json#8", "source", "warning"),  # not a string: cited by index instead
    ]
    assert facts.assertions[1].citation.locator == "broken.json#8"


def test_every_missing_field_of_one_element_is_reported() -> None:
    facts = parse_triples("kg", "t.json", json.dumps([{"relation": "uses"}]))

    assert facts.assertions == ()
    assert {p.field for p in facts.problems} == {"subject", "object", "source_text"}


def test_a_document_that_is_not_an_array_is_one_error() -> None:
    facts = parse_triples("kg", "t.json", json.dumps({"subject": "a", "relation": "uses", "object": "b"}))

    assert facts.assertions == ()
    assert [(p.where, p.severity) for p in facts.problems] == [("t.json", "error")]
    assert "JSON array" in facts.problems[0].message


def test_invalid_json_is_one_error_with_its_line() -> None:
    facts = parse_triples("kg", "t.json", '[\n  {"subject": "a",\n  oops\n]')

    assert facts.assertions == ()
    assert [(p.where, p.severity) for p in facts.problems] == [("t.json:3", "error")]


def test_triples_with_the_same_source_id_share_one_origin() -> None:
    text = json.dumps(
        [
            {"subject": "a", "relation": "uses", "object": "b", "source_text": "A uses B.", "source": "doc-1"},
            {"subject": "a", "relation": "calls", "object": "c", "source_text": "A calls C.", "source": "doc-1"},
        ]
    )

    facts = parse_triples("kg", "t.json", text)

    assert {a.citation.origin for a in facts.assertions} == {"doc-1"}


def test_read_triples_reads_a_file_and_names_it_in_citations(tmp_path: Path) -> None:
    path = tmp_path / "triples.json"
    path.write_text(load("triples.json"), encoding="utf-8")

    facts = read_triples("kg", str(path))

    assert len(facts.assertions) == 8
    assert facts.assertions[1].citation.locator == f"{path}#2"


def test_read_triples_of_a_missing_file_raises_a_fetch_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="missing.json"):
        read_triples("kg", str(tmp_path / "missing.json"))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_relations = st.sampled_from(["owns", "DEPENDS_ON", "is owned by", "uses"]) | st.text(max_size=15)
_elements = st.dictionaries(
    st.sampled_from(["subject", "relation", "object", "source_text", "source"]),
    _relations | _json,
)


@given(st.text())
def test_parse_triples_never_raises_on_arbitrary_text(text: str) -> None:
    facts = parse_triples("kg", "t.json", text)

    assert all(problem.where.startswith("t.json") for problem in facts.problems)


@given(st.lists(_elements | _json, max_size=6))
def test_parse_triples_never_raises_on_arbitrary_elements(elements: list[object]) -> None:
    facts = parse_triples("kg", "t.json", json.dumps(elements))

    assert all(isinstance(a, Assertion) and a.src and a.dst and a.rel for a in facts.assertions)
    assert len(facts.assertions) + len({p.where for p in facts.problems if p.severity == "error"}) <= len(elements)

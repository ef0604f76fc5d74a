from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from graph.facts import SourceFacts
from sync.sources.aliases import parse_aliases, read_aliases
from sync.sources.reading.textfiles import FetchError

DATA = Path(__file__).resolve().parents[2] / "data" / "aliases"


def load(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def claims(facts: SourceFacts) -> list[tuple[str, str, bool]]:
    return [(c.alias, c.target, c.target_is_name) for c in facts.aliases]


def test_aliases_of_names_and_refs_become_claims() -> None:
    facts = parse_aliases("aliases", "aliases.yaml", load("aliases.yaml"))

    assert facts.problems == ()
    assert claims(facts) == [
        ("postgres", "postgresql", True),
        ("pg", "postgresql", True),
        ("pg-main", "postgresql", True),
        ("cache", "resource:default/redis", False),
        ("session store", "resource:default/redis", False),
        ("payments API", "payments-api", True),
        ("payments", "payments-api", True),
        ("checkout flow", "component:shop/checkout", False),
    ]


def test_each_claim_is_cited_by_file_and_line_of_the_alias() -> None:
    facts = parse_aliases("aliases", "aliases.yaml", load("aliases.yaml"))

    lines = {c.alias: c.citation.locator for c in facts.aliases}
    assert lines["pg"] == "aliases.yaml:2"
    assert lines["cache"] == "aliases.yaml:4"
    assert lines["session store"] == "aliases.yaml:5"
    assert {c.citation.source for c in facts.aliases} == {"aliases"}
    assert facts.aliases[0].citation.text == "postgresql: postgres"


def test_a_ref_with_a_kind_but_no_namespace_gets_the_default_namespace() -> None:
    facts = parse_aliases("aliases", "a.yaml", "Resource:Redis: [cache]\n")

    assert claims(facts) == [("cache", "resource:default/redis", False)]


def test_yaml_booleans_and_numbers_stay_the_names_they_were_written_as() -> None:
    facts = parse_aliases("aliases", "a.yaml", "on: [no, 404, 1e3]\n")

    assert claims(facts) == [("no", "on", True), ("404", "on", True), ("1e3", "on", True)]


def test_bad_shapes_are_reported_with_file_line_and_key_and_the_rest_is_used() -> None:
    facts = parse_aliases("aliases", "broken.yaml", load("broken.yaml"))

    assert claims(facts) == [
        ("postgres", "postgresql", True),
        ("pg", "postgresql", True),
        ("elastic", "search", True),
        ("pg", "mysql", True),
    ]
    assert [(p.where, p.field, p.severity) for p in facts.problems] == [
        ("broken.yaml:3", "kafka", "error"),  # a mapping, not aliases
        ("broken.yaml:6", "search[2]", "error"),  # a nested list
        ("broken.yaml:7", "search[3]", "error"),  # null
        ("broken.yaml:8", "ledger", "warning"),  # nothing listed
        ("broken.yaml:9", "mysql", "warning"),  # pg already names postgresql
    ]
    assert "postgresql" in facts.problems[-1].message


def test_yaml_syntax_error_is_reported_with_its_line() -> None:
    facts = parse_aliases("aliases", "invalid.yaml", load("invalid.yaml"))

    assert facts.aliases == ()
    [problem] = facts.problems
    assert (problem.where, problem.severity) == ("invalid.yaml:2", "error")
    assert "line 1" in problem.message  # where the unclosed list began


@pytest.mark.parametrize("text", ["- postgres\n- pg\n", "just a sentence\n"])
def test_a_document_that_is_not_a_mapping_is_one_error(text: str) -> None:
    facts = parse_aliases("aliases", "a.yaml", text)

    assert facts.aliases == ()
    assert [(p.where, p.severity) for p in facts.problems] == [("a.yaml:1", "error")]


def test_several_documents_in_one_file_are_one_error() -> None:
    facts = parse_aliases("aliases", "a.yaml", "redis: cache\n---\npostgresql: pg\n")

    assert facts.aliases == ()
    assert [p.severity for p in facts.problems] == ["error"]


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "~\n", "{}\n"])
def test_an_empty_file_has_no_claims_and_no_problems(text: str) -> None:
    assert parse_aliases("aliases", "a.yaml", text) == SourceFacts("aliases")


def test_a_key_that_is_not_a_name_is_an_error_naming_its_line() -> None:
    facts = parse_aliases("aliases", "a.yaml", "redis: cache\n[a, b]: c\n")

    assert claims(facts) == [("cache", "redis", True)]
    assert [(p.where, p.severity) for p in facts.problems] == [("a.yaml:2", "error")]


def test_a_namespaced_key_without_a_kind_is_a_name_with_a_warning() -> None:
    facts = parse_aliases("aliases", "a.yaml", "default/kafka: [events]\n")

    assert claims(facts) == [("events", "default/kafka", True)]
    [warning] = facts.problems
    assert (warning.field, warning.severity) == ("default/kafka", "warning")


def test_a_repeated_key_keeps_the_aliases_of_both_without_repeating_claims() -> None:
    facts = parse_aliases("aliases", "a.yaml", "redis: [cache]\nredis: [cache, kv]\n")

    assert claims(facts) == [("cache", "redis", True), ("kv", "redis", True)]
    [warning] = facts.problems
    assert (warning.where, warning.field) == ("a.yaml:2", "redis")


def test_an_alias_equal_to_its_own_name_is_dropped_quietly() -> None:
    facts = parse_aliases("aliases", "a.yaml", "postgresql: [PostgreSQL, pg]\n")

    assert claims(facts) == [("pg", "postgresql", True)]
    assert facts.problems == ()


def test_read_aliases_reads_a_file_and_names_it_in_citations(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"
    path.write_text(load("aliases.yaml"), encoding="utf-8")

    facts = read_aliases("aliases", str(path))

    assert len(facts.aliases) == 8
    assert facts.aliases[0].citation.locator == f"{path}:2"


def test_read_aliases_of_a_missing_file_raises_a_fetch_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="missing.yaml"):
        read_aliases("aliases", str(tmp_path / "missing.yaml"))


_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
_values = _scalars | st.lists(_scalars | st.lists(_scalars, max_size=2), max_size=4)


@given(st.text())
def test_parse_aliases_never_raises_on_arbitrary_text(text: str) -> None:
    facts = parse_aliases("aliases", "a.yaml", text)

    assert all(problem.where.startswith("a.yaml") for problem in facts.problems)


@given(st.dictionaries(_scalars, _values | st.dictionaries(st.text(max_size=5), _scalars, max_size=2)))
def test_parse_aliases_never_raises_on_arbitrary_mappings(mapping: dict[object, object]) -> None:
    facts = parse_aliases("aliases", "a.yaml", yaml.safe_dump(mapping, allow_unicode=True))

    assert all(c.alias and c.target and "," not in c.alias for c in facts.aliases)

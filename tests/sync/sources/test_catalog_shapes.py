"""Catalog files read the way their ecosystem means them: saved catalog API responses (a JSON array
or `{"items": [...]}`) from a file, a folder or a URL alike, with their computed `relations`; YAML
that is no descriptor skipped quietly and counted (tests/data/catalog/*/README.md cite the formats)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graph.build import build_snapshot
from graph.health.hygiene import lint
from graph.relations import DEPENDS_ON
from sync.sources.catalog import parse_catalog, parse_catalog_api, read_catalog, read_catalog_rows
from sync.store.fact_codec import EncodedFacts
from tests.sync.sources.test_catalog import CatalogServer, edges

DATA = Path(__file__).resolve().parents[2] / "data" / "catalog"
RESPONSES = DATA / "api_response"
SHOP = DATA / "sockshop"
BUILT = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize("name", ["by-query.json", "entities.json"])
def test_a_saved_catalog_api_response_is_read_from_a_file(name: str) -> None:
    facts = read_catalog("catalog", str(RESPONSES / name))

    assert facts.problems == ()
    assert sorted(e.name for e in facts.entities) == [
        "artist-api",
        "artist-lookup",
        "artist-web",
        "artists-db",
        "team-a",
    ]
    web = next(e for e in facts.entities if e.name == "artist-web")
    # cited as the API cites it: the descriptor the entity came from
    assert web.citation.locator == (
        "url:https://github.com/example/catalog/blob/main/artist-web/catalog-info.yaml#component:default/artist-web"
    )
    assert ("component:default/artist-web", DEPENDS_ON, "component:default/artist-lookup") in edges(facts)


def test_a_file_and_a_url_with_the_same_bytes_give_the_same_facts() -> None:
    body = (RESPONSES / "by-query.json").read_text()
    with CatalogServer({"/api/catalog/entities": (200, body)}) as server:
        from_url = read_catalog("catalog", server.url)
    from_file = read_catalog("catalog", str(RESPONSES / "by-query.json"))

    assert from_url.entities == from_file.entities
    assert edges(from_url) == edges(from_file)


def test_a_relation_only_the_api_states_is_kept_with_its_citation_and_others_are_not_doubled() -> None:
    facts = read_catalog("catalog", str(RESPONSES / "entities.json"))
    stated = [a for a in facts.assertions if (a.src, a.rel, a.dst) == (
        "component:default/artist-web", DEPENDS_ON, "resource:default/artists-db")]  # fmt: skip

    assert [a.citation.locator.rsplit("#", 1)[1] for a in stated] == ["component:default/artist-web"]
    snapshot = build_snapshot([facts], built_at=BUILT)
    lookup_db = snapshot.edge("component:default/artist-lookup", DEPENDS_ON, "resource:default/artists-db")
    assert lookup_db is not None and lookup_db.weight == 1  # the spec said it; the relations restate it
    owned = snapshot.edge("component:default/artist-web", "owned_by", "group:default/team-a")
    assert owned is not None and owned.weight == 1


def test_a_folder_holding_a_saved_response_reads_it_for_the_store(tmp_path: Path) -> None:
    folder = tmp_path / "catalog"
    folder.mkdir()
    shutil.copy(RESPONSES / "entities.json", folder / "entities.json")

    read = read_catalog_rows("catalog", str(folder))

    assert not isinstance(read, EncodedFacts)
    assert len(read.entities) == 5 and read.problems == ()


def test_a_broken_json_file_names_its_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "entities.json").write_text('[\n  {"kind": "Component",\n  "metadata": }\n]\n')

    facts = read_catalog("catalog", str(tmp_path / "entities.json"))

    [problem] = facts.problems
    assert problem.where.startswith(f"{tmp_path / 'entities.json'}:3:")
    assert problem.severity == "error" and "not valid JSON" in problem.message


def test_yaml_that_is_no_descriptor_is_skipped_quietly_and_counted_in_lint() -> None:
    facts = read_catalog("catalog", str(SHOP))

    notes = [p for p in facts.problems if p.note]
    assert sorted(p.where for p in notes) == ["sockshop/docs/mkdocs.yml#1", "sockshop/openapi/orders.yaml#1"]
    assert [p for p in facts.problems if not p.note] == []
    report = lint(build_snapshot([facts], built_at=BUILT))
    assert [p.where for p in report.not_descriptors] == [p.where for p in notes]
    assert all(not p.note for p in report.input_problems)


def test_a_document_that_claims_to_be_a_descriptor_and_is_broken_stays_an_error() -> None:
    documents = [
        ("c.yaml#1", {"kind": "Component", "metadata": {"name": "no-api-version"}}),
        ("c.yaml#2", {"apiVersion": "backstage.io/v1alpha1", "metadata": {"name": "no-kind"}}),
        ("c.yaml#3", {"apiVersion": "backstage.io/v1alpha1", "kind": "Component", "metadata": {}}),
        ("c.yaml#4", {"site_name": "docs", "nav": ["index.md"]}),
    ]
    facts = parse_catalog("catalog", documents)

    assert [(p.where, p.field, p.severity) for p in facts.problems] == [
        ("c.yaml#1", "apiVersion", "error"),
        ("c.yaml#2", "kind", "error"),
        ("c.yaml#3", "metadata.name", "error"),
        ("c.yaml#4", "apiVersion", "note"),
    ]


def test_a_yaml_body_behind_a_url_skips_non_descriptors_too_and_yields_no_entity() -> None:
    facts = parse_catalog_api("catalog", "https://git.example/raw/mkdocs.yml", "site_name: x\n")

    assert facts.entities == ()
    # the document skipped, and the source, of no entity, an error naming it
    assert [(p.where, p.severity) for p in facts.problems] == [
        ("https://git.example/raw/mkdocs.yml", "error"),
        ("https://git.example/raw/mkdocs.yml#1", "note"),
    ]


@pytest.mark.parametrize(
    ("text", "where", "said"),
    [
        (
            "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: cart\nspec:\n  type: service\n"
            "  tags: [web, cart\n  owner: team-a\n",
            "broken.yaml:7:9",
            ("flow sequence opened here is not closed (", "; found at 8:8)"),
        ),
        (
            'apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: cart\n  description: "a cart\n',
            "broken.yaml:5:16",
            ("quoted scalar opened here is not closed (", "; found at 5:23)"),
        ),
        (
            "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: cart\n title: Cart\n",
            "broken.yaml:1:1",
            ("block mapping that starts here: ", " (found at 5:2)"),
        ),
    ],
)
def test_a_yaml_error_names_where_the_construct_began_and_where_the_parser_gave_up(
    tmp_path: Path, text: str, where: str, said: tuple[str, str]
) -> None:
    (tmp_path / "broken.yaml").write_text(text)
    (tmp_path / "good.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata:\n  name: cart-db\nspec:\n  type: database\n"
        "  owner: team-a\n"
    )

    facts = read_catalog("catalog", str(tmp_path))

    [problem] = facts.problems
    assert problem.where == f"{tmp_path.name}/{where}"
    # the parser's own words between (libyaml and PyYAML word them differently)
    head, tail = said
    assert problem.message.startswith(f"document 1 is not valid YAML and was skipped: {head}")
    assert problem.message.endswith(tail)
    assert [e.name for e in facts.entities] == ["cart-db"]  # the good parts still answer


def test_consumes_apis_naming_a_component_stays_a_dependency_and_lint_names_file_and_field() -> None:
    facts = read_catalog("catalog", str(DATA / "artists"))

    assert ("component:default/www-artist", DEPENDS_ON, "component:default/artist-lookup") in edges(facts)
    assert not any(a.rel == "consumes_api" and a.dst.startswith("component:") for a in facts.assertions)
    [said] = [p for p in facts.problems if p.field == "spec.consumesApis"]
    assert said.where == "artists/catalog-info.yaml#1"
    assert "component:default/artist-lookup is not an API: kept as a dependency" in said.message
    report = lint(build_snapshot([facts], built_at=BUILT))
    assert said in report.input_problems
    # the API it also consumes still makes its one-hop edge to the provider, naming the API
    snapshot = build_snapshot([facts], built_at=BUILT)
    edge = snapshot.edge("component:default/www-artist", DEPENDS_ON, "component:default/artist-lookup")
    assert edge is not None and edge.via == ("api:default/spotify",)

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from graph.edges import EdgeFacts, new_edge_facts
from graph.facts import Assertion, Citation, SourceFacts
from graph.health.hygiene import lint
from graph.walks.compiled import walk_index
from tests.graph.builders import BUILT_AT, dep, entity, said, snapshot

AUTH = "component:default/auth-service"
CACHE = "component:default/token-cache"


def test_two_chunks_asserting_one_edge_make_one_edge_of_weight_two_with_both_citations() -> None:
    snap = snapshot(
        assertions=[
            said("The Auth Service", "depends_on", "the token cache", "docs/c2.md:1"),
            said("AuthService", "depends_on", "the Token Cache", "docs/c8.md:1"),
        ]
    )
    edge = snap.edge(AUTH, "depends_on", CACHE)
    assert edge is not None
    assert edge.weight == 2
    assert edge.sources == ("docs/c2.md:1", "docs/c8.md:1")
    assert set(snap.entities) == {AUTH, CACHE}


def test_one_document_repeating_itself_counts_once() -> None:
    snap = snapshot(
        assertions=[
            said("auth service", "depends_on", "token cache", "docs/auth.md:3"),
            said("auth service", "depends_on", "token cache", "docs/auth.md:9"),
        ]
    )
    edge = snap.edge(AUTH, "depends_on", CACHE)
    assert edge is not None and edge.weight == 1 and len(edge.citations) == 2


def test_text_names_resolve_to_catalog_entities_through_titles_and_aliases() -> None:
    snap = snapshot(
        [
            entity(AUTH, title="The Auth Service"),
            entity("resource:default/redis", annotations={"oncall-graph/aliases": "the cache"}),
        ],
        [said("Auth Service", "uses", "the cache", "docs/a.md:1")],
    )
    edge = snap.edge(AUTH, "uses", "resource:default/redis")
    assert edge is not None and edge.extracted


def test_catalog_edge_corroborated_by_text_is_not_marked_extracted() -> None:
    snap = snapshot(
        [entity(AUTH), entity(CACHE)],
        [dep(AUTH, CACHE), said("auth service", "depends_on", "token cache", "docs/auth.md:3")],
    )
    edge = snap.edge(AUTH, "depends_on", CACHE)
    assert edge is not None and edge.weight == 2 and not edge.extracted


def test_catalog_owner_is_never_overridden_by_text_but_both_claims_are_kept() -> None:
    owner = "group:default/identity"
    snap = snapshot(
        [entity(AUTH), entity(owner)],
        [dep(AUTH, owner, rel="owned_by"), said("auth service", "owned_by", "platform team", "docs/auth.md:4")],
    )
    assert snap.owners(AUTH) == (owner,)
    assert [c.owner for c in snap.owner_claims(AUTH)] == [owner, "group:default/platform-team"]


def test_two_catalog_owners_are_both_shown() -> None:
    snap = snapshot(
        [entity(AUTH)],
        [dep(AUTH, "group:default/a", rel="owned_by"), dep(AUTH, "group:default/b", rel="owned_by", at="other.yaml#1")],
    )
    assert snap.owners(AUTH) == ("group:default/a", "group:default/b")


def test_owner_side_of_owned_by_becomes_a_group_placeholder() -> None:
    snap = snapshot(assertions=[said("billing", "owned_by", "the platform team", "docs/b.md:1")])
    assert snap.entities["group:default/platform-team"].placeholder


def test_dangling_ref_is_kept_as_a_placeholder_and_reported() -> None:
    snap = snapshot([entity(AUTH)], [dep(AUTH, "resource:default/ghost")])
    assert snap.entities["resource:default/ghost"].placeholder
    assert any("resource:default/ghost" in p.message for p in lint(snap).dangling)


def test_kindless_ref_is_taken_when_exactly_one_component_or_resource_has_the_name() -> None:
    kindless = Assertion(AUTH, "depends_on", "default/redis", Citation("c", "catalog/auth.yaml#1"), kindless=True)
    snap = snapshot([entity(AUTH), entity("resource:default/redis")], [kindless])
    assert snap.edge(AUTH, "depends_on", "resource:default/redis") is not None
    assert "catalog/auth.yaml#1" in str(lint(snap).kindless[0])


def test_kindless_ref_matching_two_entities_is_an_error_and_no_edge() -> None:
    kindless = Assertion(AUTH, "depends_on", "default/redis", Citation("c", "catalog/auth.yaml#1"), kindless=True)
    snap = snapshot([entity(AUTH), entity("resource:default/redis"), entity("component:default/redis")], [kindless])
    assert snap.out_edges.get(AUTH, ()) == ()
    assert lint(snap).kindless[0].severity == "error"


def test_held_assertions_stay_out_of_the_graph() -> None:
    held = Assertion("x", "depends_on", "y", Citation("u", "outside.md:1", extracted=True), by_name=True, held=True)
    snap = snapshot(assertions=[held])
    assert snap.edge_count == 0
    assert len(snap.held) == 1 and snap.held[0].src == "component:default/x"


def test_soft_dependency_annotation_marks_the_edge_soft() -> None:
    checkout = "component:default/checkout"
    recs = "component:default/recommendations"
    snap = snapshot(
        [entity(checkout, annotations={"oncall-graph/soft-dependencies": "component:recommendations"}), entity(recs)],
        [dep(checkout, recs)],
    )
    edge = snap.edge(checkout, "depends_on", recs)
    assert edge is not None and edge.soft


def test_deploys_attach_through_any_alias_and_unknown_services_are_reported() -> None:
    from tests.graph.builders import deploy

    snap = snapshot(
        [entity(AUTH, annotations={"oncall-graph/aliases": "svc-auth", "pagerduty.com/service-id": "PAUTH01"})],
        deploys=[
            deploy("r-1", "svc-auth", "2026-11-29T14:05:00Z"),
            deploy("r-2", "PAUTH01", "2026-11-29T14:06:00Z"),
            deploy("r-3", "nonesuch", "2026-11-29T14:07:00Z"),
        ],
    )
    assert [d.id for d in snap.deploys[AUTH]] == ["r-1", "r-2"]
    assert "nonesuch" in str(snap.hygiene.unresolved_deploys[0])


def test_alias_file_name_targets_merge_text_spellings() -> None:
    from graph.facts import AliasClaim

    aliases = SourceFacts(
        "aliases", aliases=(AliasClaim("postgres", "postgresql", Citation("a", "aliases.yaml:1"), target_is_name=True),)
    )
    snap = snapshot(
        [],
        [
            said("billing", "depends_on", "postgres", "docs/b.md:1"),
            said("user db", "runs_on", "PostgreSQL", "docs/u.md:1"),
        ],
        (),
        aliases,
    )
    assert "component:default/postgresql" in snap.entities
    assert "component:default/postgres" not in snap.entities


def test_snapshot_is_built_at_the_given_time_and_walk_index_is_cached() -> None:
    snap = snapshot([entity(AUTH)])
    assert snap.built_at == BUILT_AT
    assert walk_index(snap) is walk_index(snap)


def test_names_from_an_aliases_file_resolve_at_query_time() -> None:
    from graph.facts import AliasClaim
    from graph.naming.names import resolve

    claims = SourceFacts(
        "aliases",
        aliases=(
            AliasClaim("pg", "postgresql", Citation("a", "aliases.yaml:1"), target_is_name=True),
            AliasClaim("the cache", "redis", Citation("a", "aliases.yaml:2"), target_is_name=True),
        ),
    )
    snap = snapshot(
        [entity("resource:default/redis")], [said("billing", "depends_on", "PostgreSQL", "d.md:1")], (), claims
    )
    assert resolve(snap.aliases, "pg").entity == "component:default/postgresql"
    assert resolve(snap.aliases, "the cache").entity == "resource:default/redis"


texts = st.text(max_size=5)
citations = st.builds(Citation, texts, texts, texts, texts, st.booleans(), st.sampled_from(("", "observed")))
edge_fields = st.tuples(
    texts, texts, texts, st.lists(citations, max_size=2).map(tuple), st.integers(0, 9), st.booleans(), st.booleans(),
    st.lists(texts, max_size=2).map(tuple), st.booleans(),
)  # fmt: skip


@given(edge_fields)
def test_edges_filled_slot_by_slot_equal_the_dataclass_built_ones(fields: tuple[Any, ...]) -> None:
    made, built = new_edge_facts(*fields), EdgeFacts(*fields)
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)

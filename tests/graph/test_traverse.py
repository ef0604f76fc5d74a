from __future__ import annotations

from datetime import timedelta

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.naming.refs import short_name
from graph.questions.ask import ask
from graph.relations import propagates
from graph.walks.blast import blast_radius
from graph.walks.paths import chain_text, find_path
from graph.walks.suspects import DIRECT, ITSELF, suspects
from tests.graph.builders import BUILT_AT, chain, dep, deploy, entity, said, snapshot


def c(name: str) -> str:
    return f"component:default/{name}"


def test_blast_radius_walks_upstream_with_hops_and_paths() -> None:
    snap = chain("login", "auth", "cache", "redis")
    result = blast_radius(snap, c("redis"))
    assert [(i.entity, i.hops) for i in result.impacted] == [(c("cache"), 1), (c("auth"), 2), (c("login"), 3)]
    login = result.impacted[-1]
    assert login.path == (c("redis"), c("cache"), c("auth"), c("login"))
    assert [(e.src, e.dst) for e in login.edges] == [
        (c("cache"), c("redis")),
        (c("auth"), c("cache")),
        (c("login"), c("auth")),
    ]
    assert all(e.citations for e in login.edges)


def test_blast_radius_stops_at_max_depth() -> None:
    result = blast_radius(chain("a", "b", "c", "d"), c("d"), max_depth=2)
    assert [i.entity for i in result.impacted] == [c("c"), c("b")]
    assert c("a") not in result.survives  # beyond the limit is not safe, only unreported


def test_blast_radius_terminates_on_cycles() -> None:
    refs = [c(n) for n in "abc"]
    snap = snapshot([entity(r) for r in refs], [dep(refs[0], refs[1]), dep(refs[1], refs[2]), dep(refs[2], refs[0])])
    result = blast_radius(snap, refs[0])
    assert sorted(i.entity for i in result.impacted) == [refs[1], refs[2]]


def test_blast_radius_names_survivors_exactly() -> None:
    snap = snapshot(
        [
            entity(c("a")),
            entity(c("b")),
            entity(c("lonely")),
            entity("resource:default/db"),
            entity("group:default/team"),
        ],
        [dep(c("a"), c("b")), dep(c("a"), "group:default/team", rel="owned_by")],
    )
    result = blast_radius(snap, c("b"))
    assert result.survives == (c("lonely"), "resource:default/db")


def test_ownership_and_part_of_never_propagate_failure() -> None:
    snap = snapshot(
        [entity(c("a")), entity("group:default/team"), entity("system:default/shop")],
        [dep(c("a"), "group:default/team", rel="owned_by"), dep(c("a"), "system:default/shop", rel="part_of")],
    )
    assert blast_radius(snap, "group:default/team").impacted == ()
    assert blast_radius(snap, "system:default/shop").impacted == ()


def test_equal_length_paths_are_broken_by_weight() -> None:
    # top depends on x and y, both depend on db; the top->y->db route is corroborated twice.
    snap = snapshot(
        [entity(c(n)) for n in ("top", "x", "y", "db")],
        [
            dep(c("top"), c("x")),
            dep(c("x"), c("db")),
            dep(c("top"), c("y")),
            dep(c("y"), c("db")),
            dep(c("y"), c("db"), at="runbook.yaml#2"),
        ],
    )
    top = next(i for i in blast_radius(snap, c("db")).impacted if i.entity == c("top"))
    assert top.path == (c("db"), c("y"), c("top"))


def test_catalog_edges_outrank_text_edges_of_higher_weight() -> None:
    snap = snapshot(
        [entity(c(n)) for n in ("top", "x", "y", "db")],
        [
            dep(c("top"), c("x")),
            dep(c("x"), c("db")),
            said("top", "depends_on", "y", "docs/1.md:1"),
            said("y", "depends_on", "db", "docs/1.md:2"),
            said("y", "depends_on", "db", "docs/2.md:1"),
            said("y", "depends_on", "db", "docs/3.md:1"),
        ],
    )
    top = next(i for i in blast_radius(snap, c("db")).impacted if i.entity == c("top"))
    assert top.path == (c("db"), c("x"), c("top"))


def test_entities_reachable_only_through_soft_edges_degrade() -> None:
    soft = {"oncall-graph/soft-dependencies": "component:recs"}
    snap = snapshot(
        [entity(c("checkout"), annotations=soft), entity(c("recs")), entity(c("web")), entity(c("cart"))],
        [dep(c("checkout"), c("recs")), dep(c("web"), c("checkout")), dep(c("cart"), c("recs"))],
    )
    result = blast_radius(snap, c("recs"))
    impact = {i.entity: i.impact for i in result.impacted}
    assert impact == {c("cart"): "breaks", c("checkout"): "degrades", c("web"): "degrades"}
    assert result.degrades == (c("checkout"), c("web"))


def test_hard_path_wins_over_a_shorter_soft_one() -> None:
    soft = {"oncall-graph/soft-dependencies": "component:db"}
    snap = snapshot(
        [entity(c("app"), annotations=soft), entity(c("db")), entity(c("proxy"))],
        [dep(c("app"), c("db")), dep(c("app"), c("proxy")), dep(c("proxy"), c("db"))],
    )
    app = next(i for i in blast_radius(snap, c("db")).impacted if i.entity == c("app"))
    assert app.impact == "breaks" and app.path == (c("db"), c("proxy"), c("app"))


def test_impacted_systems_are_counted() -> None:
    shop = "system:default/shop"
    snap = snapshot(
        [entity(c("a")), entity(c("b")), entity(c("c")), entity(shop)],
        [dep(c("a"), c("b")), dep(c("a"), shop, rel="part_of"), dep(c("c"), shop, rel="part_of")],
    )
    [system] = blast_radius(snap, c("b")).systems
    assert (system.entity, system.impacted, system.total) == (shop, 1, 2)


def test_each_system_counts_its_own_impacted_parts() -> None:
    shop, ops, idle = "system:default/shop", "system:default/ops", "system:default/idle"
    parts = [("a", shop), ("b", shop), ("d", shop), ("a", ops), ("x", idle)]
    snap = snapshot(
        [entity(c(n)) for n in "abdx"] + [entity(shop), entity(ops), entity(idle)],
        [dep(c("a"), c("b")), dep(c("d"), c("b"))] + [dep(c(n), s, rel="part_of") for n, s in parts],
    )
    result = blast_radius(snap, c("b"))
    assert [(s.entity, s.impacted, s.total) for s in result.systems] == [(ops, 1, 1), (shop, 2, 3)]
    assert (result.breaks_count, result.degrades_count) == (len(result.breaks), len(result.degrades)) == (2, 0)


edges_strategy = st.lists(
    st.tuples(st.integers(0, 11), st.sampled_from(["depends_on", "calls", "owned_by", "part_of"]), st.integers(0, 11)),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(edges_strategy, st.integers(0, 11))
def test_blast_radius_equals_ancestors_over_propagating_edges(edges: list[tuple[int, str, int]], failed: int) -> None:
    refs = [c(f"n{i}") for i in range(12)]
    snap = snapshot([entity(r) for r in refs], [dep(refs[a], refs[b], rel=rel) for a, rel, b in edges])
    model = nx.DiGraph([(refs[a], refs[b]) for a, rel, b in edges if a != b and propagates(rel)])
    model.add_nodes_from(refs)
    result = blast_radius(snap, refs[failed])
    assert {i.entity for i in result.impacted} == nx.ancestors(model, refs[failed])
    for impact in result.impacted:
        assert len(impact.edges) == impact.hops == nx.shortest_path_length(model, impact.entity, refs[failed])
        for edge, (a, b) in zip(impact.edges, zip(impact.path, impact.path[1:], strict=False), strict=True):
            assert (edge.dst, edge.src) == (a, b) and edge.citations
            assert snap.edge(edge.src, edge.rel, edge.dst) is edge


def test_suspects_lists_dependencies_with_owners_and_deploys_in_the_window() -> None:
    team = "group:default/risk-team"
    snap = snapshot(
        [entity(c(n)) for n in ("payments", "antifraud", "ledger", "rules")] + [entity(team)],
        [
            dep(c("payments"), c("antifraud")),
            dep(c("payments"), c("ledger")),
            dep(c("antifraud"), c("rules")),
            dep(c("antifraud"), team, rel="owned_by"),
        ],
        [
            deploy("r-8812", "antifraud", "2026-11-29T14:05:00Z"),
            deploy("r-old", "ledger", "2026-11-28T09:00:00Z"),
            deploy("r-7", "rules", "2026-11-29T13:00:00Z"),
            deploy("r-9", "payments", "2026-11-29T12:00:00Z"),
            deploy("r-future", "antifraud", "2026-11-29T16:00:00Z"),
        ],
    )
    result = suspects(snap, c("payments"), now=BUILT_AT, window=timedelta(hours=6))
    by_entity = {d.entity: d for d in result.dependencies}
    assert set(by_entity) == {c("antifraud"), c("ledger"), c("rules")}
    assert [(s.deploy.id, s.reason) for s in by_entity[c("antifraud")].deploys] == [("r-8812", DIRECT)]
    assert by_entity[c("antifraud")].owners == (team,)
    assert by_entity[c("ledger")].deploys == ()
    assert by_entity[c("rules")].deploys[0].reason.startswith("transitive")
    assert [(s.deploy.id, s.reason) for s in result.own_deploys] == [("r-9", ITSELF)]


def test_suspects_respects_depth() -> None:
    result = suspects(chain("a", "b", "c", "d"), c("a"), now=BUILT_AT, max_depth=1)
    assert [d.entity for d in result.dependencies] == [c("b")]


def test_path_follows_edges_in_their_own_direction_either_way() -> None:
    snap = chain("login", "auth", "cache")
    forward = find_path(snap, c("login"), c("cache"))
    backward = find_path(snap, c("cache"), c("login"))
    assert forward.path == (c("login"), c("auth"), c("cache"))
    assert backward.path == (c("cache"), c("auth"), c("login"))  # always from FROM to TO
    assert [(e.src, e.dst) for e in backward.edges] == [(c("auth"), c("cache")), (c("login"), c("auth"))]
    assert chain_text(backward, short_name) == "cache <-depends_on- auth <-depends_on- login"
    assert chain_text(forward, short_name) == "login -depends_on-> auth -depends_on-> cache"


def test_path_prefers_depends_on_when_equally_short() -> None:
    snap = snapshot(
        [entity(c(n)) for n in ("a", "b", "c", "d")],
        [dep(c("a"), c("b"), rel="calls"), dep(c("b"), c("d")), dep(c("a"), c("c")), dep(c("c"), c("d"))],
    )
    assert find_path(snap, c("a"), c("d")).path == (c("a"), c("c"), c("d"))


def test_path_between_unconnected_entities_is_empty() -> None:
    snap = snapshot([entity(c("a")), entity(c("b"))])
    assert find_path(snap, c("a"), c("b")).path == ()


SEED = [
    said("The login flow", "depends_on", "the auth service", "docs/c1.md:1"),
    said("The Auth Service", "depends_on", "the token cache", "docs/c2.md:1"),
    said("The token cache", "backed_by", "Redis", "docs/c3.md:1"),
    said("Billing", "depends_on", "PostgreSQL", "docs/c4.md:1"),
    said("The user database", "runs_on", "PostgreSQL", "docs/c5.md:1"),
    said("The auth service", "owned_by", "the platform team", "docs/c6.md:1"),
    said("Billing", "owned_by", "the platform team", "docs/c7.md:1"),
    said("AuthService", "depends_on", "the Token Cache", "docs/c8.md:1"),
]


def test_ask_answers_what_breaks_with_cited_lines_in_the_seed_form() -> None:
    answer = ask(snapshot(assertions=SEED), "What breaks if the Redis goes down?", now=BUILT_AT)
    assert answer.intent == "impact"
    assert answer.entities == (c("redis"),)
    assert "auth-service -depends_on-> token-cache [docs/c2.md:1, docs/c8.md:1] x2" in answer.cited_lines
    assert "Survives: billing, postgresql and user-database." in answer.sentences


def test_ask_finds_the_longest_alias_in_the_question() -> None:
    answer = ask(snapshot(assertions=SEED), "who owns the auth service?", now=BUILT_AT)
    assert answer.intent == "ownership"
    assert answer.entities == (c("auth-service"),)
    assert answer.sentences == ("auth-service is owned by platform-team.",)


def test_ask_about_an_unknown_entity_says_so() -> None:
    answer = ask(snapshot(assertions=SEED), "what breaks if kafka goes down?", now=BUILT_AT)
    assert answer.entities == ()
    assert "could not find" in answer.sentences[0]


def test_ask_path_between_two_entities() -> None:
    answer = ask(snapshot(assertions=SEED), "how is the login flow connected to redis?", now=BUILT_AT)
    assert answer.intent == "path"
    assert len(answer.edges) == 3


def test_ask_who_owns_what_a_service_publishes_to_follows_that_relation() -> None:
    snap = snapshot(
        [entity(c("billing-worker")), entity("resource:default/kafka"), entity(c("ledger"))],
        [
            said("Billing Worker", "publishes_to", "Kafka", "docs/b.md:1"),
            said("Billing Worker", "calls", "ledger", "docs/b.md:2"),
            said("Kafka", "owned_by", "the Data Platform Team", "docs/k.md:1"),
        ],
    )
    answer = ask(snap, "Which team owns the system that Billing Worker publishes events to?", now=BUILT_AT)
    assert answer.sentences == ("kafka is owned by data-platform-team.",)


@settings(max_examples=60, deadline=None)
@given(edges_strategy, st.sets(st.integers(0, 11)), st.integers(0, 11), st.none() | st.integers(1, 4))
def test_hops_are_shortest_paths_over_hard_and_over_all_edges_within_the_depth(
    edges: list[tuple[int, str, int]], soft_ones: set[int], failed: int, depth: int | None
) -> None:
    """Breaks at their hops over hard edges, degrades at theirs over every edge: each walk's hops
    are shortest paths (the walk reads them from one breadth-first order), cut at `depth`."""
    refs = [c(f"n{i}") for i in range(12)]
    softs = {a: ", ".join(refs[b] for a2, _, b in edges if a2 == a) for a in soft_ones}  # all of its edges soft
    snap = snapshot(
        [entity(r, annotations={"oncall-graph/soft-dependencies": softs[i]} if softs.get(i) else None)
         for i, r in enumerate(refs)],
        [dep(refs[a], refs[b], rel=rel) for a, rel, b in edges],
    )  # fmt: skip
    walked = [(refs[a], refs[b]) for a, rel, b in edges if a != b and propagates(rel)]
    every = nx.DiGraph(walked)
    hard = nx.DiGraph([(a, b) for a, b in walked if refs.index(a) not in soft_ones])
    for model in (every, hard):
        model.add_nodes_from(refs)
    within = depth if depth is not None else len(refs)
    far_all = nx.single_source_shortest_path_length(every.reverse(), refs[failed], cutoff=within)
    far_hard = nx.single_source_shortest_path_length(hard.reverse(), refs[failed], cutoff=within)
    result = blast_radius(snap, refs[failed], max_depth=depth)
    assert {i.entity: (i.hops, i.impact) for i in result.impacted} == {
        ref: (far_hard[ref], "breaks") if ref in far_hard else (hops, "degrades")
        for ref, hops in far_all.items()
        if ref != refs[failed]
    }

"""Calls seen in traces, merged with the declared graph (graph.observed, graph.evidence)."""

from __future__ import annotations

from datetime import UTC, datetime

from graph.coverage import DEPENDENTS, Coverage, coverage, nothing_found, what_it_knows
from graph.evidence import DECLARED, DOCUMENTED, EXTRACTED, OBSERVED, PUSHED, evidence_of, kinds_of
from graph.exposure.redaction import redact_edge
from graph.exposure.visibility import EVERYONE
from graph.facts import CallCount, Citation, Observation, SourceFacts, SourceMark
from graph.observed import CLIENT, SERVER, describe, dress
from graph.traffic.drift import drift
from graph.walks.blast import blast_radius
from graph.walks.paths import find_path
from tests.graph.builders import BUILT_AT, dep, entity, snapshot

CHECKOUT = "component:default/checkout"
CART = "component:default/cart"
PAYMENTS = "component:default/payments"
ACCOUNTING = "component:default/accounting"
KAFKA = "resource:default/kafka"
POSTGRES = "resource:default/orders-db"
SOURCE = "service-graph:http://prometheus:9090"
SEEN = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)


def seen(client: str, server: str, *, connection: str = "", broker: str = "", source: str = SOURCE) -> Observation:
    origin = f"{source}: {client} -> {server}"
    locator = f"{source.partition(':')[0]} {source.partition(':')[2]}"
    cited = Citation(source, locator, origin=origin, text=f"{client} -> {server}", evidence=OBSERVED)
    return Observation(client, server, cited, connection=connection, broker=broker)


def traces(*observations: Observation, calls: tuple[CallCount, ...] = ()) -> SourceFacts:
    return SourceFacts(SOURCE, observations=observations, calls=calls)


def shop(*observations: Observation, declared: tuple[tuple[str, str], ...] = (), calls: tuple[CallCount, ...] = ()):
    entities = [
        entity(CHECKOUT, annotations={"oncall-graph/service-name": "checkoutservice, checkout-v2"}),
        entity(CART, annotations={"backstage.io/kubernetes-id": "cartservice"}),
        entity(PAYMENTS),
        entity(ACCOUNTING),
        entity(KAFKA),
        entity(POSTGRES, annotations={"oncall-graph/aliases": "orders"}),
    ]
    return snapshot(entities, [dep(a, b) for a, b in declared], (), traces(*observations, calls=calls))


def test_telemetry_names_map_through_the_annotation_then_the_kubernetes_id_then_any_alias() -> None:
    snap = shop(seen("checkout-v2", "cartservice"), seen("cartservice", "orders", connection="database"))
    calls = snap.edge(CHECKOUT, "calls", CART)
    assert calls is not None and calls.observed and not calls.declared
    db = snap.edge(CART, "calls", POSTGRES)
    assert db is not None and db.observed


def test_a_name_no_entity_answers_to_is_listed_never_invented() -> None:
    snap = shop(seen("checkoutservice", "external-payments-platform"), seen("mystery-batch", "cartservice"))
    assert "component:default/external-payments-platform" not in snap.entities
    listed = {(u.name, u.side) for u in snap.unknown_services}
    assert listed == {("external-payments-platform", SERVER), ("mystery-batch", CLIENT)}
    assert not snap.out_edges.get(CHECKOUT)


def test_virtual_clients_and_self_loops_are_neither_edges_nor_unknown_services() -> None:
    snap = shop(seen("user", "checkoutservice"), seen("unknown", "cartservice"), seen("cartservice", "cartservice"))
    assert snap.unknown_services == ()
    assert all(not edges for edges in snap.out_edges.values())


def test_a_call_that_matches_a_declared_dependency_corroborates_it_as_one_edge() -> None:
    snap = shop(seen("checkoutservice", "cartservice"), declared=((CHECKOUT, CART),))
    edges = [e for e in snap.out_edges[CHECKOUT] if e.dst == CART]
    assert len(edges) == 1
    (edge,) = edges
    assert edge.rel == "depends_on" and edge.declared and edge.observed and edge.weight == 2
    assert kinds_of(edge.citations) == (DECLARED, OBSERVED)


def test_observed_calls_widen_the_blast_radius() -> None:
    sparse = shop()
    assert blast_radius(sparse, CART).breaks == ()
    observed = shop(seen("checkoutservice", "cartservice"), seen("payments", "checkoutservice"))
    assert set(blast_radius(observed, CART).breaks) == {CHECKOUT, PAYMENTS}


def test_messaging_is_shown_but_a_consumer_going_down_breaks_no_producer() -> None:
    snap = shop(seen("checkoutservice", "accounting", connection="messaging_system", broker="kafka/orders"))
    sent = snap.edge(CHECKOUT, "sends_to", ACCOUNTING)
    assert sent is not None and sent.observed
    assert CHECKOUT not in blast_radius(snap, ACCOUNTING).breaks
    # The broker the spans name is a dependency of both sides.
    assert set(blast_radius(snap, KAFKA).breaks) == {CHECKOUT, ACCOUNTING}


def test_paths_prefer_corroborated_edges() -> None:
    snap = shop(
        seen("checkoutservice", "cartservice"),
        seen("cartservice", "payments"),
        seen("checkoutservice", "accounting"),
        seen("accounting", "payments"),
        declared=((CHECKOUT, ACCOUNTING), (ACCOUNTING, PAYMENTS)),
    )
    found = find_path(snap, CHECKOUT, PAYMENTS)
    assert found.path == (CHECKOUT, ACCOUNTING, PAYMENTS)


def test_an_answer_shows_the_calls_behind_an_observed_citation() -> None:
    count = CallCount(f"{SOURCE}: checkoutservice -> cartservice", 3000, 6, 7 * 86_400, SEEN)
    snap = shop(seen("checkoutservice", "cartservice"), calls=(count,))
    edge = snap.edge(CHECKOUT, "calls", CART)
    assert edge is not None
    shown = redact_edge(snap, edge, EVERYONE)
    assert shown.sources == (
        "service-graph http://prometheus:9090 · 3,000 calls in 7 d to 2026-12-06 03:00 UTC, 0.2% failed",
    )
    (before,) = blast_radius(snap, CART, viewer=EVERYONE).impacted  # kept with the snapshot's recent walks
    assert "3,000 calls" in before.edges[0].sources[0]
    # New counts arrive beside the graph: the same edges, the derived indexes kept.
    newer = CallCount(count.key, 4500, 0, 7 * 86_400, SEEN)
    polled = snap.with_marks(snap.marks, calls={newer.key: newer})
    assert polled.out_edges is snap.out_edges and polled.derived is snap.derived
    assert "4,500 calls" in dress(edge, polled.calls).sources[0] and "0% failed" in dress(edge, polled.calls).sources[0]
    # An operator sees everything, so the walk skips redaction: the calls are told all the same.
    (impact,) = blast_radius(polled, CART, viewer=EVERYONE).impacted
    assert [e.sources for e in impact.edges] == [
        ("service-graph http://prometheus:9090 · 4,500 calls in 7 d to 2026-12-06 03:00 UTC, 0% failed",)
    ]


def test_a_source_that_counts_no_failures_says_so_instead_of_none_failed() -> None:
    cited = seen("a", "b", source="jaeger:http://jaeger:16686").citation
    count = CallCount(cited.origin, 29, 0, 86_400, SEEN)
    assert describe(cited, count) == (
        "jaeger http://jaeger:16686 · 29 calls in 1 d to 2026-12-06 03:00 UTC, failures not reported"
    )


def test_a_citation_without_counts_reads_as_its_source() -> None:
    cited = seen("a", "b").citation
    assert describe(cited, None) == "service-graph http://prometheus:9090"


def test_every_citation_has_a_kind_of_evidence() -> None:
    assert evidence_of(Citation("catalog:cat", "cat/a.yaml#1")) == DECLARED
    assert evidence_of(Citation("docs:rb", "rb/a.md:3", extracted=True)) == DOCUMENTED
    assert evidence_of(Citation("review:extracted", "rb/a.md chunk 1", extracted=True)) == EXTRACTED
    assert evidence_of(Citation("webhook:github", "POST /webhooks/github delivery 1")) == PUSHED
    assert evidence_of(seen("a", "b").citation) == OBSERVED
    assert BUILT_AT.tzinfo is UTC


def test_drift_names_undeclared_calls_unobserved_dependencies_and_unknown_services() -> None:
    count = CallCount(f"{SOURCE}: checkoutservice -> cartservice", 3000, 6, 604_800, SEEN)
    snap = shop(
        seen("checkoutservice", "cartservice"),
        seen("payments", "accounting"),
        seen("cartservice", "redis-manual"),
        declared=((CHECKOUT, PAYMENTS), (CART, POSTGRES), (PAYMENTS, ACCOUNTING)),
        calls=(count,),
    )
    found = drift(snap)
    assert [(u.edge.src, u.edge.dst, u.calls) for u in found.undeclared] == [(CHECKOUT, CART, 3000)]
    # checkout and payments both had traffic and never called each other; orders-db had none: no verdict.
    assert [(e.src, e.dst) for e in found.unobserved] == [(CHECKOUT, PAYMENTS)]
    assert [(u.name, u.side) for u in found.unknown_services] == [("redis-manual", SERVER)]
    assert found.coverage == Coverage(components=4, declaring_dependencies=3, with_observed_traffic=4, trace_sources=())


def test_an_answer_that_finds_nothing_says_how_much_the_graph_could_know() -> None:
    snap = shop()
    result = blast_radius(snap, CART)
    assert result.impacted == ()
    assert nothing_found(CART, DEPENDENTS, result.coverage) == (
        "No dependents of cart are declared or observed. "
        "0 of 4 components declare dependencies; no trace source is configured."
    )
    traced = snap.with_marks({SOURCE: SourceMark(SOURCE, last_success=SEEN)})
    assert what_it_knows(coverage(traced)) == (
        "0 of 4 components declare dependencies; 0 have observed traffic (service-graph http://prometheus:9090)."
    )


def test_the_blast_radius_shows_calls_for_everyone_too() -> None:
    count = CallCount(f"{SOURCE}: checkoutservice -> cartservice", 1200, 0, 86_400, SEEN)
    snap = shop(seen("checkoutservice", "cartservice"), calls=(count,))
    [impact] = blast_radius(snap, CART).impacted
    assert impact.edges[0].sources == (
        "service-graph http://prometheus:9090 · 1,200 calls in 1 d to 2026-12-06 03:00 UTC, 0% failed",
    )


def test_drift_keeps_the_busiest_of_each_list_and_counts_them_all() -> None:
    counts = tuple(
        CallCount(f"{SOURCE}: {a} -> {b}", calls, 0, 604_800, SEEN)
        for a, b, calls in (("checkoutservice", "cartservice", 50), ("payments", "accounting", 900))
    )
    snap = shop(seen("checkoutservice", "cartservice"), seen("payments", "accounting"), calls=counts)
    found = drift(snap, limit=1)
    assert [(u.edge.src, u.calls) for u in found.undeclared] == [(PAYMENTS, 900)]
    assert found.totals == (2, 0, 0) and found.cut
    assert not drift(snap).cut


def test_a_citation_told_its_calls_is_not_told_them_twice() -> None:
    count = CallCount(f"{SOURCE}: checkoutservice -> cartservice", 3000, 6, 7 * 86_400, SEEN)
    snap = shop(seen("checkoutservice", "cartservice"), calls=(count,))
    edge = snap.edge(CHECKOUT, "calls", CART)
    assert edge is not None
    once = dress(edge, snap.calls)
    assert dress(once, snap.calls).sources == once.sources and once.sources[0].count("calls") == 1

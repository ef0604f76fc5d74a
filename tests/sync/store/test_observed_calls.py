"""Observed edges are facts with history; their counts live beside them (real SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graph.evidence import OBSERVED
from graph.facts import CallCount, Citation, Observation, SourceFacts
from sync.store.fact_store import Store

T0 = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)
SG = "service-graph:http://prometheus:9090"


def observation(client: str, server: str) -> Observation:
    origin = f"{SG}: {client} -> {server}"
    cited = Citation(
        SG, "service-graph http://prometheus:9090", origin=origin, text=f"{client} -> {server}", evidence=OBSERVED
    )
    return Observation(client, server, cited, connection="database" if server == "postgres" else "")


def test_observations_round_trip_with_their_kind_of_evidence(store: Store) -> None:
    store.ensure_source(SG, "service-graph", "http://prometheus:9090")
    seen = (observation("checkout", "cart"), observation("cart", "postgres"))
    store.apply(SG, SourceFacts(SG, observations=seen), at=T0, version="")
    [loaded] = store.load_facts()
    assert loaded.observations == seen
    assert all(o.citation.evidence == OBSERVED for o in loaded.observations)


def test_new_counts_for_the_same_edges_move_no_graph_version_and_keep_the_first_sighting(store: Store) -> None:
    store.ensure_source(SG, "service-graph", "http://prometheus:9090")
    seen = SourceFacts(SG, observations=(observation("checkout", "cart"),))
    key = seen.observations[0].citation.origin
    store.apply(SG, seen, at=T0, version="")
    store.replace_calls(SG, [CallCount(key, 3000, 6, 604_800, T0)])
    version = store.graph_version()

    later = T0 + timedelta(minutes=5)
    applied = store.apply(SG, seen, at=later, version="")
    store.replace_calls(SG, [CallCount(key, 3100, 0, 604_800, later)])
    assert (applied.added, applied.retired) == (0, 0)
    assert store.graph_version() == version
    [count] = store.load_calls().values()
    assert (count.calls, count.failed, count.last_seen, count.first_seen) == (3100, 0, later, T0)


def test_counts_are_read_for_the_sources_asked_only(store: Store) -> None:
    other = "jaeger:http://jaeger:16686"
    for name, kind in ((SG, "service-graph"), (other, "jaeger")):
        store.ensure_source(name, kind, "x")
    store.replace_calls(SG, [CallCount("a", 10, 0, 60, T0)])
    store.replace_calls(other, [CallCount("b", 20, 1, 60, T0)])
    assert set(store.load_calls([SG])) == {"a"}
    assert set(store.load_calls()) == {"a", "b"}
    store.replace_calls(SG, [])
    assert set(store.load_calls()) == {"b"}

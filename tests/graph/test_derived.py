"""The indexes derived from a snapshot's facts: each built once by the module that owns it, all of
them by `warm` before a snapshot serves, and kept when only the source marks move."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from graph.exposure.passages import cite_passages, passage_index
from graph.exposure.visibility import Viewer, resolve_for, restricted_refs
from graph.facts import Passage, SourceFacts, SourceMark
from graph.questions.ask import ask
from graph.snapshot import Snapshot, SnapshotRef
from graph.traffic.live import LiveBlast, LiveCall, LiveReading, present
from graph.walks.blast import blast_radius, runtime_mask, system_parts
from graph.walks.compiled import walk_index
from graph.walks.networkx_view import networkx_view
from graph.walks.suspects import suspects
from graph.warm import warm
from tests.graph.builders import BUILT_AT, dep, entity, snapshot

NOW = datetime(2026, 11, 29, 16, 0, tzinfo=UTC)
REDIS, TOKENS, AUTH = "resource:default/redis", "component:default/token-cache", "component:default/auth-service"
VAULT, SHOP = "component:default/vault", "system:default/shop"
OUTSIDER = Viewer(channel="C-OPS")


def graph() -> Snapshot:
    """A chain with a system, a restricted entity and a runbook: every index has something to hold."""
    secret = {"oncall-graph/visibility": "restricted", "oncall-graph/allowed-channels": "C-SEC"}
    entities = [
        entity(REDIS),
        entity(TOKENS),
        entity(AUTH, title="The Auth Service"),
        entity(VAULT, annotations=secret),
    ]
    edges = [
        dep(TOKENS, REDIS),
        dep(AUTH, TOKENS),
        dep(VAULT, REDIS),
        *(dep(r, SHOP, rel="part_of") for r in (TOKENS, AUTH)),
    ]
    docs = Passage(
        "docs", "runbooks/redis.md §Restart", "Restart", "Restart redis.", 1, "runbooks/redis.md", ("Restart",)
    )
    return snapshot([*entities, entity(SHOP)], edges, (), SourceFacts("docs", passages=(docs,)))


def test_after_warm_no_answer_builds_an_index_of_its_own() -> None:
    snap = graph()
    warm(snap)
    built = dict(snap.derived)
    # walks, the recent blast radii, restricted entities, their names, runbook sections, passages,
    # runtime kinds, systems, deploy targets, coverage, the live part's telemetry names and PagerDuty services
    assert len(built) == 12
    result = blast_radius(snap, REDIS, viewer=OUTSIDER)
    assert result.impacted and result.survives == () and result.systems and result.hidden_count == 1
    assert suspects(snap, AUTH, now=NOW, viewer=OUTSIDER).dependencies
    assert cite_passages(snap, result.subjects(), viewer=OUTSIDER)
    assert resolve_for(snap, "the auth service", OUTSIDER).entity == AUTH
    ask(snap, "what breaks if redis goes down?", now=NOW, viewer=OUTSIDER)
    reading = LiveReading("prometheus:9090", NOW, 300, (LiveCall("token-cache", "redis", 100, 50),))
    assert LiveBlast(result, present(snap, reading)).failing == 1
    assert snap.derived.keys() == built.keys()
    assert all(snap.derived[key] is index for key, index in built.items())


def test_each_index_is_built_once_and_kept_when_only_the_marks_move() -> None:
    snap = graph()
    indexes = (walk_index, restricted_refs, passage_index, runtime_mask, system_parts, networkx_view)
    first = [index(snap) for index in indexes]
    assert [index(snap) for index in indexes] == first
    fresher = snap.with_marks({"docs": SourceMark("docs", last_success=BUILT_AT)})
    assert fresher.marks["docs"].last_success == BUILT_AT
    assert all(index(fresher) is built for index, built in zip(indexes, first, strict=True))


def test_a_snapshot_with_other_facts_builds_its_own_indexes() -> None:
    snap = graph()
    before = restricted_refs(snap)
    opened = replace(snap.entities[VAULT], annotations={})
    other = replace(snap, entities={**snap.entities, VAULT: opened})
    assert before == {VAULT}
    assert restricted_refs(other) == frozenset()


def test_a_swap_prepares_the_new_snapshot_before_anyone_can_read_it() -> None:
    old, new = graph(), graph()
    seen: list[tuple[Snapshot, Snapshot | None]] = []
    ref = SnapshotRef(old, prepare=lambda snap: seen.append((snap, ref.current())))
    assert ref.swap(new) is old
    assert seen == [(new, old)]
    assert ref.current() is new


def test_a_snapshot_of_an_older_graph_version_never_replaces_a_newer_one() -> None:
    """Two builds that raced (a rebuild and a delta) swap in either order: the newer one serves."""
    older, newer = replace(graph(), version=4), replace(graph(), version=5)
    ref = SnapshotRef(newer)
    assert ref.swap(older) is older  # refused
    assert ref.current() is newer
    fresher = newer.with_marks({})  # the same version, fresher marks: taken
    assert ref.swap(fresher) is newer and ref.current() is fresher
    unversioned = graph()  # built from no store (-1): never refused
    assert ref.swap(unversioned) is fresher and ref.current() is unversioned
    assert ref.swap(older) is unversioned and ref.current() is older


def test_the_networkx_view_holds_every_edge_with_its_facts() -> None:
    snap = graph()
    view = networkx_view(snap)
    assert set(view.nodes) == set(snap.entities)
    assert view.edges[TOKENS, REDIS, "depends_on"]["facts"] is snap.edge(TOKENS, "depends_on", REDIS)

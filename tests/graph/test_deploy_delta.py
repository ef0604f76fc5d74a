"""A deploy delta answers exactly as a rebuild from the same facts: for random adds and retires of
polled and pushed deploys (attached by repository, Kubernetes id, name or alias; ambiguous; unknown)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.render.json import blast_json, path_json, suspects_json
from graph.build import build_snapshot
from graph.deploys.deploy_delta import with_deploys
from graph.facts import AliasClaim, Citation, Deploy, SourceFacts
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius
from graph.walks.paths import find_path
from graph.walks.suspects import suspects
from graph.warm import warm
from tests.graph.builders import BUILT_AT, dep, entity

NOW = datetime(2026, 11, 29, 16, 0, tzinfo=UTC)
CHECKOUT, CART, PAYMENTS = "component:default/checkout", "component:default/cart", "component:default/payments"
LEDGER, DB = "component:default/ledger", "resource:default/orders-db"
POLLED, PUSHED = "deploys", "webhook:github"


def catalog() -> SourceFacts:
    monorepo = {"github.com/project-slug": "acme/shop"}
    entities = (
        entity(CHECKOUT, annotations=monorepo),
        entity(CART, annotations=monorepo),
        entity(PAYMENTS, annotations={"backstage.io/kubernetes-id": "pay-api"}),
        entity(LEDGER, annotations={"github.com/project-slug": "acme/ledger"}),
        entity(DB),
    )
    assertions = (dep(CHECKOUT, CART), dep(CART, PAYMENTS), dep(PAYMENTS, LEDGER), dep(LEDGER, DB))
    alias = AliasClaim("money", "payments", Citation("aliases", "aliases.yaml:1"), target_is_name=True)
    return SourceFacts("catalog", entities, assertions, aliases=(alias,))


# (service, repository): by project slug, narrowed by name, by Kubernetes id, by alias, ambiguous, unknown
SHAPES = [
    ("checkout", "acme/shop"),
    ("cart", "acme/shop"),
    ("storefront", "acme/shop"),
    ("pay-api", ""),
    ("money", ""),
    ("", "acme/ledger"),
    ("orders-db", ""),
    ("inventory", ""),
]


def a_deploy(source: str, number: int, shape: int, minutes: int) -> Deploy:
    service, repository = SHAPES[shape]
    cited = Citation(source, f"{source}:{number}", origin=f"deploy:{number}")
    at = NOW - timedelta(minutes=minutes)
    return Deploy(f"d{number}", service, at, cited, version=f"v{number}", repository=repository)


operations = st.lists(
    st.tuples(
        st.sampled_from([POLLED, PUSHED]),
        st.booleans(),  # add (True) or retire one of the source's live deploys (False)
        st.integers(0, 40),  # deploy number; the same number from both sources is the same id
        st.integers(0, len(SHAPES) - 1),
        st.integers(0, 600),
    ),
    max_size=25,
)


def rebuilt(live: dict[str, list[Deploy]]) -> Snapshot:
    batches = [catalog()] + [SourceFacts(s, deploys=tuple(live[s])) for s in (POLLED, PUSHED)]
    return build_snapshot(batches, built_at=BUILT_AT)


def answers(snapshot: Snapshot) -> object:
    refs = (CHECKOUT, CART, PAYMENTS, LEDGER, DB)
    return (
        dict(snapshot.deploys),
        snapshot.hygiene,
        dict(snapshot.deploy_ids),
        [suspects_json(r, suspects(snapshot, r, now=NOW, max_depth=4)) for r in refs],
        [blast_json(r, blast_radius(snapshot, r)) for r in refs],
        path_json(find_path(snapshot, CHECKOUT, DB)),
    )


@settings(max_examples=150, deadline=None)
@given(operations)
def test_a_delta_answers_as_a_rebuild_does(ops: list[tuple[str, bool, int, int, int]]) -> None:
    live: dict[str, list[Deploy]] = {POLLED: [], PUSHED: []}
    current = rebuilt(live)
    warm(current)
    for source, adding, number, shape, minutes in ops:
        added, retired = [], []
        if adding and all(d.id != f"d{number}" for d in live[source]):
            added = [a_deploy(source, number, shape, minutes)]
        elif not adding and live[source]:
            retired = [live[source][number % len(live[source])]]
        for d in retired:
            live[source].remove(d)
        live[source].extend(added)
        expected = rebuilt(live)
        delta = with_deploys(current, added=added, retired=retired, built_at=BUILT_AT)
        ids = [d.id for batch in live.values() for d in batch]
        shared = any(ids.count(d.id) > 1 for d in added) or any(ids.count(d.id) > 0 for d in retired)
        if delta is None:
            assert shared, "a delta may refuse only a deploy id another live fact carries"
            current = expected
            continue
        assert answers(delta) == answers(expected)
        assert delta.entities is current.entities and delta.out_edges is current.out_edges
        assert delta.derived is current.derived  # the catalog's indexes carried over, not rebuilt
        current = delta


def test_a_retired_deploy_leaves_and_an_added_one_shows_at_once() -> None:
    first = a_deploy(PUSHED, 1, 0, 10)
    before = rebuilt({POLLED: [], PUSHED: [first]})
    second = a_deploy(PUSHED, 2, 3, 5)
    after = with_deploys(before, added=[second], retired=[first], built_at=NOW)
    assert after is not None
    assert after.deploys == {PAYMENTS: (second,)}
    assert after.built_at == NOW
    assert [s.deploy.id for s in suspects(after, CHECKOUT, now=NOW).suspect_deploys] == ["d2"]


def test_an_id_two_sources_carry_is_left_to_a_rebuild() -> None:
    polled = a_deploy(POLLED, 7, 0, 10)
    before = rebuilt({POLLED: [polled], PUSHED: []})
    assert with_deploys(before, added=[a_deploy(PUSHED, 7, 0, 10)], built_at=NOW) is None

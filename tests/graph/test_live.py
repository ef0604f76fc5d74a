"""The present beside the prediction: live calls mapped to entities, each hop marked (graph.traffic.live)."""

from __future__ import annotations

from datetime import UTC, datetime

from graph.exposure.visibility import Viewer
from graph.facts import Assertion
from graph.snapshot import Snapshot
from graph.traffic.live import NOTHING, Incident, LiveBlast, LiveCall, LiveReading, Present, live_suspects, present
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects
from tests.graph.builders import dep, deploy, entity, snapshot
from tests.graph.test_observed import CART, CHECKOUT, PAYMENTS, seen, shop

AT = datetime(2026, 12, 6, 3, 12, 5, tzinfo=UTC)


def reading(*calls: LiveCall, error: str = "") -> LiveReading:
    return LiveReading("prometheus:9090", AT, 300, calls, error)


def test_an_impacted_entity_is_marked_by_its_own_hop_failing_now() -> None:
    snap = shop(seen("checkoutservice", "cartservice"), seen("payments", "checkoutservice"))
    now = present(
        snap, reading(LiveCall("checkout-v2", "cartservice", 200, 24), LiveCall("payments", "checkoutservice", 90, 0))
    )
    marks = {i.entity: now.mark(i.edges) for i in blast_radius(snap, CART).impacted}
    checkout, payments = marks[CHECKOUT], marks[PAYMENTS]
    assert checkout is not None and checkout.failing and checkout.failed_share == 0.12
    assert checkout.sentence("5 min") == "checkout: 12% of calls to cart failing (last 5 min)"
    assert payments is not None and not payments.failing
    assert payments.sentence("5 min") == "payments: calls to checkout not failing yet (last 5 min)"


def test_a_reading_that_failed_marks_nothing_and_unknown_names_are_left_out() -> None:
    snap = shop(seen("checkoutservice", "cartservice"))
    [impact] = blast_radius(snap, CART).impacted
    assert present(snap, reading(error="no answer within 1 s")).mark(impact.edges) is None
    assert present(snap, reading(LiveCall("stranger", "cartservice", 10, 10))).hops == {}


def test_open_incidents_land_on_the_entity_their_service_maps_to() -> None:
    snap = snapshot([entity(CART, annotations={"pagerduty.com/service-id": "PCART01"}), entity(CHECKOUT)])
    incidents = [
        Incident(42, "cart 5xx", "https://pd.example/incidents/42", "triggered", "PCART01"),
        Incident(43, "cart latency", "https://pd.example/incidents/43", "acknowledged", "PCART01"),
        Incident(7, "someone else's", "https://pd.example/incidents/7", "triggered", "POTHER"),
    ]
    opened = present(snap, None, incidents)
    assert [i.number for i in opened.open_incidents(CART)] == [43, 42]
    assert opened.open_incidents(CHECKOUT) == ()


# frontend -> checkout -> cart <- fraud (restricted), cart -> db; checkout -> payments.
FRONTEND, FRAUD, DB = "component:default/frontend", "component:default/fraud-check", "resource:default/orders-db"
SECRET_ROOM = Viewer(channel="COPS")


def live_shop() -> Snapshot:
    restricted = {"oncall-graph/visibility": "restricted", "oncall-graph/allowed-channels": "CSECURITY"}
    entities = [
        entity(FRONTEND),
        entity(CHECKOUT, annotations={"pagerduty.com/service-id": "PCHECKOUT"}),
        entity(CART, annotations={"pagerduty.com/service-id": "PCART"}),
        entity(PAYMENTS, annotations={"pagerduty.com/service-id": "PPAY"}),
        entity(FRAUD, annotations={**restricted, "pagerduty.com/service-id": "PFRAUD"}),
        entity(DB),
    ]
    links = [(FRONTEND, CHECKOUT), (CHECKOUT, CART), (FRAUD, CART), (CART, DB), (CHECKOUT, PAYMENTS)]
    return snapshot(entities, [dep(a, b) for a, b in links])


def names(snap: Snapshot) -> Present:
    calls = (
        LiveCall("frontend", "checkout", 500, 0),  # not failing yet
        LiveCall("checkout", "cart", 500, 60),  # 12%
        LiveCall("fraud-check", "cart", 100, 50),  # 50%, hidden from most channels
        LiveCall("cart", "orders-db", 900, 3),  # 0.3%: under the failing share
        LiveCall("checkout", "payments", 200, 10),  # 5%
        LiveCall("user", "frontend", 10, 10),  # traffic from outside marks nothing
    )
    incidents = (
        Incident(7, "frontend slow", "https://acme.pagerduty.com/incidents/Q7", "acknowledged", "PFRONT"),
        Incident(9, "fraud-check retries failing", "https://acme.pagerduty.com/incidents/Q9", "triggered", "PCHECKOUT"),
        Incident(11, "payments 5xx", "https://acme.pagerduty.com/incidents/Q11", "triggered", "PPAY"),
    )
    return present(snap, reading(*calls), incidents, incidents_from="api.pagerduty.com")


def test_failing_impacted_entities_come_first_then_open_incidents_then_the_rest_nearest_first() -> None:
    snap = live_shop()
    shown = LiveBlast(blast_radius(snap, DB), names(snap))
    assert [i.entity for i in shown.now] == [FRAUD, CHECKOUT]  # 50%, then 12% (with incident #9)
    assert shown.failing == 2
    assert [i.entity for i in shown.first(10)] == [FRAUD, CHECKOUT, CART, FRONTEND]
    assert [i.entity for i in shown.first(3)] == [FRAUD, CHECKOUT, CART]
    assert [i.entity for i in shown.not_yet] == [CART, FRONTEND]  # cart's 0.3% is background noise
    cart = next(i for i in shown.first(10) if i.entity == CART)
    mark = shown.mark(cart)
    assert mark is not None and not mark.failing and mark.calls == 900
    assert [i.number for i in shown.incidents(next(iter(shown.now[1:])))] == [9]


def test_a_viewer_is_never_told_of_a_hidden_entity_failing_nor_its_name_in_an_incident_title() -> None:
    snap = live_shop()
    looked = names(snap).for_viewer(snap, SECRET_ROOM)
    shown = LiveBlast(blast_radius(snap, DB, viewer=SECRET_ROOM), looked)
    assert [i.entity for i in shown.now] == [CHECKOUT] and shown.failing == 1
    assert [i.title for i in looked.open_incidents(CHECKOUT)] == ["(hidden: it names an entity not shown here)"]
    assert looked.open_incidents(PAYMENTS)[0].title == "payments 5xx"


def test_a_hop_redacted_away_marks_nothing_rather_than_another_entitys_hop() -> None:
    # db <- cart <- fraud (hidden) <- auditor: the auditor's own hop leads to a hidden entity.
    auditor = "component:default/auditor"
    snap = live_shop()
    more = snapshot([*snap.entities.values(), entity(auditor)], [*_links(snap), dep(auditor, FRAUD)])
    now = present(more, reading(LiveCall("auditor", "fraud-check", 10, 9), LiveCall("cart", "orders-db", 10, 5)))
    impact = blast_radius(more, DB, viewer=SECRET_ROOM).impact_of(auditor)
    assert impact is not None and [(e.src, e.dst) for e in impact.edges] == [(CART, DB)]
    assert now.mark(impact.edges, impact.entity) is None
    assert now.mark(impact.edges) is not None  # without the entity, the last edge left would be read


def _links(snap: Snapshot) -> list[Assertion]:
    return [Assertion(e.src, e.rel, e.dst, e.citations[0]) for edges in snap.out_edges.values() for e in edges]


def test_suspects_rank_dependencies_failing_now_first_and_their_deploys_say_so() -> None:
    snap = live_shop()
    deployed = snapshot(list(snap.entities.values()), _links(snap), [deploy("r-1", "payments", "2026-12-06T02:30:00Z")])
    found = suspects(deployed, CHECKOUT, now=AT)
    assert [d.entity for d in found.dependencies] == [CART, PAYMENTS, DB]
    ranked = live_suspects(found, names(deployed))
    assert [d.entity for d in ranked.dependencies] == [CART, PAYMENTS, DB]
    [payments] = [d for d in ranked.dependencies if d.entity == PAYMENTS]
    assert payments.deploys[0].reason == (
        "direct dependency, failing now (5% of calls from checkout failed) and open incident #11"
    )
    calm = live_suspects(found, present(deployed, reading(LiveCall("checkout", "payments", 100, 40))))
    assert [d.entity for d in calm.dependencies] == [PAYMENTS, CART, DB]
    assert live_suspects(found, present(deployed, reading(error="down"))) is found


def test_the_live_part_is_cited_in_one_line_or_said_missing_in_one_line() -> None:
    snap = live_shop()
    assert (
        names(snap).said() == "live: prometheus:9090 at 03:12:05 UTC (last 5 min) · open incidents: api.pagerduty.com"
    )
    late = present(snap, reading(error="no answer within 1 s"), incidents_from="api.pagerduty.com",
                   incidents_error="HTTP 401")  # fmt: skip
    assert late.missing and late.said() == (
        "live data missing: prometheus:9090: no answer within 1 s · open incidents missing: api.pagerduty.com: HTTP 401"
    )
    assert not NOTHING.configured and NOTHING.said() == ""

"""The present beside the prediction: live calls mapped to entities, each hop marked (graph.live)."""

from __future__ import annotations

from datetime import UTC, datetime

from graph.blast import blast_radius
from graph.live import Incident, LiveCall, LiveReading, present
from tests.graph.builders import entity, snapshot
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

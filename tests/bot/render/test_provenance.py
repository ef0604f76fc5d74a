"""Every front says where a hop comes from: declared, observed, or both (receipts and pictures)."""

from __future__ import annotations

from bot.render.dot import blast_dot
from graph.citations import cite_edge
from graph.walks.blast import blast_radius
from tests.graph.test_observed import CART, CHECKOUT, PAYMENTS, seen, shop


def test_pictures_and_receipts_say_where_each_hop_comes_from() -> None:
    snap = shop(
        seen("checkoutservice", "cartservice"), seen("payments", "checkoutservice"), declared=((PAYMENTS, CHECKOUT),)
    )
    observed, both = snap.edge(CHECKOUT, "calls", CART), snap.edge(PAYMENTS, "depends_on", CHECKOUT)
    assert observed is not None and both is not None
    assert cite_edge(observed).startswith("checkout -calls-> cart (observed) [")
    assert cite_edge(both).startswith("payments -depends_on-> checkout (declared + observed) [")
    drawing = blast_dot(blast_radius(snap, CART)).source
    assert "calls (observed)" in drawing and "style=dotted" in drawing
    assert "depends_on (declared + observed)" in drawing

"""The MCP tools with a live port: the same JSON as `--json`, what is failing now shown only on what
the agent's viewer may see."""

from __future__ import annotations

from typing import Any

from bot.mcp.tools import GraphAccess, call_tool
from bot.query.live import LiveSource
from graph.exposure.visibility import EVERYONE, Viewer
from tests.fakes.prometheus_server import PrometheusServer
from tests.live_shop import live_feed, live_shop
from tests.service_graph_series import END

CART, CHECKOUT, FRAUD = "component:default/cart", "component:default/checkout", "component:default/fraud-check"


def tool(prometheus: PrometheusServer, which: str, viewer: Viewer, live: LiveSource | None, **arguments: Any) -> Any:
    snapshot = live_shop(prometheus.url)
    access = GraphAccess(lambda: snapshot, dict, lambda: END, now=END, viewer=viewer, live=live)
    return call_tool(access, which, arguments)


def test_an_agent_sees_what_is_failing_now_only_on_what_its_viewer_may_see(
    service_graph_prometheus: PrometheusServer,
) -> None:
    feed = live_feed(service_graph_prometheus.url)
    everyone = tool(service_graph_prometheus, "blast_radius", EVERYONE, feed, name="cart")
    assert [(i["entity"], i["live"]["failed_share"]) for i in everyone["impacted"][:2]] == [
        (FRAUD, 0.5),
        (CHECKOUT, 0.12),
    ]
    assert everyone["live"]["failing"] == 2 and everyone["live"]["error"] is None

    outsider = tool(service_graph_prometheus, "blast_radius", Viewer(channel="COPS"), feed, name="cart")
    assert FRAUD not in [i["entity"] for i in outsider["impacted"]] and "fraud" not in str(outsider)
    assert outsider["impacted"][0]["entity"] == CHECKOUT and outsider["live"]["failing"] == 1

    suspects = tool(service_graph_prometheus, "suspects", EVERYONE, feed, name="checkout")
    assert [d["entity"] for d in suspects["dependencies"]][:2] == [CART, "component:default/payments"]
    asked = tool(service_graph_prometheus, "ask", EVERYONE, feed, question="what breaks if cart goes down?")
    assert asked["live"]["source"] == service_graph_prometheus.url.removeprefix("http://")
    # One reading served all four answers.
    assert feed.calls is not None and (feed.calls.counts.reads, feed.calls.counts.cached) == (1, 3)

    without = tool(service_graph_prometheus, "blast_radius", EVERYONE, None, name="cart")
    assert "live" not in without and "live" not in without["impacted"][0]

"""Observed calls through `oncall-graph mcp` (the MCP SDK's stdio client, as an agent's host runs
it): a sparse catalog widened by a Jaeger query service's dependency links, each edge marked
declared and observed; `drift`; a viewer who may not see a restricted entity; and a Jaeger that
fails at the session's own sync, the last good edges kept."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.bot.mcp.test_mcp_server import call, cli, mcp_session, run
from tests.fakes.jaeger_query import Call, JaegerQuery, jaeger_query

DATA = Path(__file__).resolve().parents[2] / "data" / "observed"
CATALOGS = ("--catalog", str(DATA / "catalog.yaml"), "--catalog", str(DATA / "restricted.yaml"))
CART, CHECKOUT, FRONTEND = "component:default/cart", "component:default/checkout", "component:default/frontend"
PAYMENTS, BILLING, VAULT = "component:default/payments", "component:default/billing", "component:default/vault-proxy"
ORDERS_DB = "resource:default/orders-db"
SECURITY = "CSECURITY"  # the one channel restricted.yaml lets see vault-proxy
# (client, server, calls) as Jaeger's dependency links name them: services by their telemetry names.
LINKS = (
    ("frontend", "checkoutservice", 120),
    ("checkoutservice", "cartservice", 40),
    ("cartservice", "orders", 80),  # orders-db's alias
    ("checkoutservice", "payments", 30),  # corroborates checkout's one declared dependency
    ("checkoutservice", "vaultproxy", 50),  # the restricted vault-proxy, by its service-name annotation
    ("vaultproxy", "orders", 20),
    ("billing", "payments", 15),
    ("frontend", "external-payments-platform", 25),  # maps to no entity
    ("frontend", "vault-proxy-canary", 12),  # maps to no entity, and names the restricted one
)


@pytest.fixture
def jaeger() -> Iterator[JaegerQuery]:
    with jaeger_query() as fake:
        fake.calls += [Call(c, s, n, datetime.now(UTC) - timedelta(hours=1)) for c, s, n in LINKS]
        yield fake


@pytest.fixture
def synced(tmp_path: Path, jaeger: JaegerQuery) -> str:
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    done = cli(tmp_path, "--db", url, *CATALOGS, "--jaeger", jaeger.url, "sync")
    assert done.returncode == 0, done.stderr
    return url


def edges(answer: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["src"], e["dst"]): e for i in answer["impacted"] for e in i["edges"]}


def marks(edge: dict[str, Any]) -> tuple[str, bool, bool]:
    return edge["rel"], edge["declared"], edge["observed"]


def test_blast_radius_widens_by_observed_edges_each_marked_declared_or_observed_and_cited(
    tmp_path: Path, synced: str, jaeger: JaegerQuery
) -> None:
    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", synced) as session:
            payments = await call(session, "blast_radius", {"name": "payments"})
            orders = await call(session, "blast_radius", {"name": "orders-db"})
        assert {i["entity"]: i["hops"] for i in payments["impacted"]} == {CHECKOUT: 1, BILLING: 1, FRONTEND: 2}
        found = edges(payments)
        # Declared and seen calling: one edge, both marks, cited by the catalog and by Jaeger.
        assert marks(found[(CHECKOUT, PAYMENTS)]) == ("depends_on", True, True)
        catalog, traced = found[(CHECKOUT, PAYMENTS)]["sources"]
        assert catalog.endswith("catalog.yaml#3")
        assert traced.startswith(f"jaeger {jaeger.url} · 30 calls in 7 d to ")
        assert marks(found[(BILLING, PAYMENTS)]) == ("calls", False, True)
        assert marks(found[(FRONTEND, CHECKOUT)]) == ("calls", False, True)
        assert found[(FRONTEND, CHECKOUT)]["sources"][0].endswith(" UTC, failures not reported")
        # Declared only: billing's dependency on orders-db, which traces never show.
        assert marks(edges(orders)[(BILLING, ORDERS_DB)]) == ("depends_on", True, False)
        assert orders["coverage"]["trace_sources"] == [f"jaeger:{jaeger.url}"]

    run(scenario)


def test_drift_names_the_undeclared_the_unobserved_the_unknown_and_the_coverage(
    tmp_path: Path, synced: str, jaeger: JaegerQuery
) -> None:
    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", synced, viewer=["--all"]) as session:
            report = await call(session, "drift", {})
        undeclared = [(u["src"], u["dst"], u["rel"], u["calls"]) for u in report["undeclared"]]
        assert undeclared == [
            (FRONTEND, CHECKOUT, "calls", 120), (CART, ORDERS_DB, "calls", 80), (CHECKOUT, VAULT, "calls", 50),
            (CHECKOUT, CART, "calls", 40), (VAULT, ORDERS_DB, "calls", 20), (BILLING, PAYMENTS, "calls", 15),
        ]  # fmt: skip
        assert report["undeclared"][0]["sources"][0].startswith(f"jaeger {jaeger.url} · 120 calls in 7 d")
        (unobserved,) = report["unobserved"]
        assert (unobserved["src"], unobserved["dst"], unobserved["rel"]) == (BILLING, ORDERS_DB, "depends_on")
        assert unobserved["sources"][0].endswith("restricted.yaml#2")
        unknown = [(u["name"], u["side"], u["calls"], u["sources"]) for u in report["unknown_services"]]
        assert unknown == [
            ("external-payments-platform", "server", 25, [f"jaeger {jaeger.url}"]),
            ("vault-proxy-canary", "server", 12, [f"jaeger {jaeger.url}"]),
        ]
        # frontend, checkout, cart, payments, vault-proxy and billing called or were called;
        # checkout and billing declare a dependency; ledger and accounting neither.
        assert report["coverage"] == {
            "components": 8, "declaring_dependencies": 2, "with_observed_traffic": 6,
            "trace_sources": [f"jaeger:{jaeger.url}"],
        }  # fmt: skip

    run(scenario)


def test_a_viewer_who_may_not_see_a_restricted_entity_gets_no_edge_or_unknown_service_naming_it(
    tmp_path: Path, synced: str
) -> None:
    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", synced, viewer=["--as-channel", "COPS"]) as session:
            outside = [
                await call(session, "blast_radius", {"name": "orders-db"}),
                await call(session, "blast_radius", {"name": "checkout"}),
                await call(session, "drift", {}),
            ]
        async with mcp_session(tmp_path, "--db", synced, viewer=["--as-channel", SECURITY]) as session:
            inside = await call(session, "blast_radius", {"name": "orders-db"})
            inside_drift = await call(session, "drift", {})
        blast, _, report = outside
        assert {i["entity"]: i["hops"] for i in blast["impacted"]} == {BILLING: 1, CART: 1, CHECKOUT: 2, FRONTEND: 3}
        for answer in outside:
            assert "vault" not in json.dumps(answer).lower()
        assert [u["name"] for u in report["unknown_services"]] == ["external-payments-platform"]
        assert len(report["undeclared"]) == 4
        # The security channel sees the restricted entity, its observed edges and its canary.
        assert marks(edges(inside)[(VAULT, ORDERS_DB)]) == ("calls", False, True)
        assert VAULT in {i["entity"] for i in inside["impacted"]}
        assert "vault-proxy-canary" in [u["name"] for u in inside_drift["unknown_services"]]
        assert len(inside_drift["undeclared"]) == 6

    run(scenario)


def test_a_jaeger_that_fails_at_the_sessions_own_sync_keeps_the_last_good_edges(
    tmp_path: Path, synced: str, jaeger: JaegerQuery
) -> None:
    jaeger.answers += [(500, b'{"data":null,"errors":[{"code":500,"msg":"storage down"}]}')]

    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", synced, *CATALOGS, "--jaeger", jaeger.url) as session:
            answer = await call(session, "blast_radius", {"name": "orders-db"})
            lag = await call(session, "lag", {})
        assert jaeger.answers == []  # the session's sync asked, and was answered 500
        assert {i["entity"]: i["hops"] for i in answer["impacted"]} == {BILLING: 1, CART: 1, CHECKOUT: 2, FRONTEND: 3}
        assert marks(edges(answer)[(CART, ORDERS_DB)]) == ("calls", False, True)
        (traced,) = [s for s in lag["sources"] if s["name"] == f"jaeger:{jaeger.url}"]
        assert "HTTP 500 Internal Server Error: storage down" in traced["last_error"]
        assert traced["last_success"] is not None

    run(scenario)

"""Trace sources through the command line, run as a subprocess: a sparse catalog widened by the calls
a service graph (a real Prometheus where installed) and a Jaeger query service observed, each edge
marked and cited with its calls; and the guarantees every source has (a broken or empty read keeps
the last good edges, history and `--as-of`) holding for them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.jaeger_query import Call, jaeger_query
from tests.fakes.prometheus_server import PrometheusServer
from tests.service_graph_series import POLLED

ROOT = Path(__file__).resolve().parents[3]
CATALOG = str(ROOT / "tests" / "data" / "observed" / "catalog.yaml")
CART, CHECKOUT, FRONTEND = "component:default/cart", "component:default/checkout", "component:default/frontend"
PAYMENTS, ORDERS_DB = "component:default/payments", "resource:default/orders-db"


@pytest.fixture(autouse=True)
def _fresh_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default database is ./oncall-graph.db


def run_json(*args: str, **env: str) -> tuple[int, Any]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_"))}
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", *args, "--json"], capture_output=True, text=True, cwd=Path.cwd(),
        env={**base, "PYTHONPATH": str(ROOT), **env}, timeout=120,
    )  # fmt: skip
    assert done.stdout.startswith("{"), done.stderr
    return done.returncode, json.loads(done.stdout)


def impacted(answer: dict[str, Any]) -> dict[str, int]:
    return {i["entity"]: i["hops"] for i in answer["impacted"]}


def edges(answer: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["src"], e["dst"]): e for i in answer["impacted"] for e in i["edges"]}


def outcome(sync: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(s for s in sync["sources"] if s["name"].startswith(f"{kind}:"))


def test_the_service_graph_widens_a_sparse_catalog_and_a_poll_of_new_counts_moves_no_version(
    service_graph_prometheus: PrometheusServer,
) -> None:
    url = service_graph_prometheus.url
    traced = ("--catalog", CATALOG, "--service-graph", url)
    _, declared_only = run_json("--catalog", CATALOG, "blast-radius", "orders-db")
    assert declared_only["impacted"] == []

    code, answer = run_json(*traced, "blast-radius", "orders-db")
    assert code == 0 and impacted(answer) == {CART: 1, CHECKOUT: 2, FRONTEND: 3}
    for edge in edges(answer).values():
        assert (edge["rel"], edge["observed"], edge["declared"]) == ("calls", True, False)
    (cited,) = edges(answer)[(CHECKOUT, CART)]["sources"]
    assert cited.startswith(f"service-graph {url} · 650 calls in 7 d to ") and cited.endswith(" UTC, 2.0% failed")
    assert edges(answer)[(CART, ORDERS_DB)]["sources"][0].startswith(f"service-graph {url} · 1,300 calls in 7 d")

    # checkout sends to accounting through a queue: accounting going down breaks no producer.
    assert run_json(*traced, "blast-radius", "accounting")[1]["impacted"] == []
    # checkout's one declared dependency is also observed: one edge, both kinds, cited by both.
    corroborated = edges(run_json(*traced, "blast-radius", "payments")[1])[(CHECKOUT, PAYMENTS)]
    assert (corroborated["rel"], corroborated["declared"], corroborated["observed"]) == ("depends_on", True, True)
    assert corroborated["weight"] == 2 and corroborated["sources"][0] == f"{CATALOG}#3"
    assert corroborated["sources"][1].startswith(f"service-graph {url} · 260 calls in 7 d")

    _, first = run_json(*traced, "sync")
    _, polled = run_json(*traced, "sync", ONCALL_GRAPH_SERVICE_GRAPH_PREFIX=POLLED)
    said = outcome(polled, "service-graph")
    assert (said["outcome"], said["error"], said["added"], said["retired"]) == ("applied", "", 0, 0)
    assert polled["version"] == first["version"]
    _, answer = run_json(*traced, "blast-radius", "orders-db", ONCALL_GRAPH_SERVICE_GRAPH_PREFIX=POLLED)
    assert " · 1,300 calls in 7 d " in edges(answer)[(CHECKOUT, CART)]["sources"][0]


def test_a_service_graph_that_fails_or_answers_empty_keeps_its_last_good_edges(
    service_graph_prometheus: PrometheusServer,
) -> None:
    traced = ("--catalog", CATALOG, "--service-graph", service_graph_prometheus.url)
    assert outcome(run_json(*traced, "sync")[1], "service-graph")["outcome"] == "applied"

    _, empty = run_json(*traced, "sync", ONCALL_GRAPH_SERVICE_GRAPH_PREFIX="absent_traces_service_graph")
    held = outcome(empty, "service-graph")
    assert held["outcome"] == "held" and held["error"] == "would drop 8 of 8 facts (limit 50%)"
    code, broken = run_json(*traced, "sync", ONCALL_GRAPH_SERVICE_GRAPH_PREFIX="traces-service-graph")
    failed = outcome(broken, "service-graph")
    assert failed["outcome"] == "failed" and "ONCALL_GRAPH_SERVICE_GRAPH_PREFIX" in failed["error"]

    _, answer = run_json("blast-radius", "orders-db")
    assert impacted(answer) == {CART: 1, CHECKOUT: 2, FRONTEND: 3}
    assert " · 650 calls in 7 d " in edges(answer)[(CHECKOUT, CART)]["sources"][0]


def test_jaeger_widens_the_catalog_and_keeps_its_edges_through_errors_until_one_retires() -> None:
    now = datetime.now(UTC)
    with jaeger_query() as jaeger:
        jaeger.bare, jaeger.string_counts = True, True  # as jaeger-ui's samples and protojson write them
        links = [
            ("frontend", "checkoutservice", 120), ("checkoutservice", "cartservice", 40), ("cartservice", "orders", 80),
            ("cartservice", "cartservice", 500),
        ]  # fmt: skip
        jaeger.calls += [Call(parent, child, calls, now - timedelta(hours=1)) for parent, child, calls in links]
        traced = ("--catalog", CATALOG, "--jaeger", jaeger.url)

        code, answer = run_json(*traced, "blast-radius", "orders-db")
        assert code == 0 and impacted(answer) == {CART: 1, CHECKOUT: 2, FRONTEND: 3}
        (cited,) = edges(answer)[(CHECKOUT, CART)]["sources"]
        assert cited.startswith(f"jaeger {jaeger.url} · 40 calls in 7 d to ")
        assert cited.endswith(" UTC, failures not reported")
        synced_at = run_json("lag")[1]["sources"][-1]["last_success"]

        jaeger.answers += [(500, b'{"data":null,"errors":[{"code":500,"msg":"storage down"}]}'), (200, b"\x00garbage")]
        for said in ("HTTP 500 Internal Server Error: storage down", "the answer is not JSON"):
            assert said in outcome(run_json(*traced, "sync")[1], "jaeger")["error"]
        jaeger.answers.append((200, b'{"data": []}'))
        assert outcome(run_json(*traced, "sync")[1], "jaeger")["outcome"] == "held"
        assert impacted(run_json("blast-radius", "orders-db")[1]) == {CART: 1, CHECKOUT: 2, FRONTEND: 3}

        # frontend stops calling checkout: one edge of three retires, kept in history.
        jaeger.calls = [c for c in jaeger.calls if c.parent != "frontend"]
        applied = outcome(run_json(*traced, "sync")[1], "jaeger")
        assert (applied["outcome"], applied["retired"]) == ("applied", 1)
        assert impacted(run_json("blast-radius", "orders-db")[1]) == {CART: 1, CHECKOUT: 2}
        then = run_json("--as-of", synced_at, "blast-radius", "orders-db")[1]
        assert impacted(then) == {CART: 1, CHECKOUT: 2, FRONTEND: 3}

"""`--otlp` through the command line: a sparse catalog's blast radius widened by the calls traces show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
CATALOG = ROOT / "tests" / "data" / "otlp" / "catalog"  # every component, no dependency declared
TRACES = ROOT / "tests" / "data" / "otlp" / "shop"
FLOOR = {"ONCALL_GRAPH_OBSERVED_MIN_CALLS": "2"}  # the shop's traces call each edge two or three times


@pytest.fixture(autouse=True)
def _fresh_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # ./oncall-graph.db: each test starts from an empty one


def run_json(*args: str, **env: str) -> tuple[int, Any]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_"))}
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", *args, "--json"],
        capture_output=True, text=True, cwd=Path.cwd(), env={**base, "PYTHONPATH": str(ROOT), **env}, timeout=120,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def impacted(data: dict[str, Any]) -> dict[str, str]:
    return {i["entity"]: i["impact"] for i in data["impacted"]}


def test_observed_calls_widen_a_sparse_catalogs_blast_radius_each_edge_marked_and_cited() -> None:
    code, sparse = run_json("--catalog", str(CATALOG), "blast-radius", "orders-db")
    assert code == 0 and sparse["impacted"] == []
    code, data = run_json("--catalog", str(CATALOG), "--otlp", str(TRACES), "blast-radius", "orders-db", **FLOOR)
    assert code == 0
    # frontend-web is the frontend's service name (its annotation); cart was called once: under the floor.
    assert impacted(data) == {"component:default/checkout": "breaks", "component:default/frontend": "breaks"}
    (frontend,) = [i for i in data["impacted"] if i["entity"] == "component:default/frontend"]
    hops = [(e["src"], e["rel"], e["dst"], e["declared"], e["observed"]) for e in frontend["edges"]]
    assert hops == [
        ("component:default/checkout", "calls", "resource:default/orders-db", False, True),
        ("component:default/frontend", "calls", "component:default/checkout", False, True),
    ]
    # The exemplar span, then the calls it stands for (its window ends at the newest span read).
    assert frontend["edges"][0]["sources"] == [
        "shop/collector-export.jsonl:1 trace 015b8eff… span 0100000000000005 · 3 calls in 7 d to 2026-11-30 14:00 UTC, "
        "33.3% failed"
    ]
    assert "component:default/cart" in data["survives"]


def test_messaging_breaks_no_producer_but_the_broker_is_a_dependency_of_both_sides() -> None:
    code, consumer = run_json("--catalog", str(CATALOG), "--otlp", str(TRACES), "blast-radius", "accounting", **FLOOR)
    assert code == 0 and consumer["impacted"] == []  # checkout -> accounting goes through kafka: asynchronous
    code, broker = run_json("--catalog", str(CATALOG), "--otlp", str(TRACES), "blast-radius", "kafka", **FLOOR)
    assert code == 0
    assert impacted(broker) == {
        "component:default/checkout": "breaks",
        "component:default/accounting": "breaks",
        "component:default/frontend": "breaks",
    }


def test_under_the_default_floor_a_few_calls_are_noise_not_dependencies() -> None:
    code, data = run_json("--catalog", str(CATALOG), "--otlp", str(TRACES), "blast-radius", "orders-db")
    assert code == 0 and data["impacted"] == []  # three calls are fewer than the default ten


def test_drift_and_lint_say_where_catalog_and_traffic_disagree() -> None:
    code, drift = run_json("--catalog", str(CATALOG), "--otlp", str(TRACES), "drift", **FLOOR)
    assert code == 0
    undeclared = {(d["src"], d["dst"]) for d in drift["undeclared"]}
    assert ("component:default/checkout", "resource:default/orders-db") in undeclared
    assert all(d["calls"] >= 2 and d["sources"] for d in drift["undeclared"])
    assert drift["unobserved"] == []  # the catalog declares nothing to miss
    coverage = drift["coverage"]
    assert coverage["declaring_dependencies"] == 0 and coverage["with_observed_traffic"] > 0
    assert coverage["trace_sources"] == [f"otlp:{TRACES}"]
    code, lint = run_json("--catalog", str(CATALOG), "--otlp", str(TRACES), "lint", **FLOOR)
    assert lint["drift"]["undeclared"] == len(drift["undeclared"])
    assert lint["drift"]["coverage"] == coverage

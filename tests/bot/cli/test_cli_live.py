"""Predicted and present through the command line, run as a subprocess: the shop's service graph in a
real Prometheus (its last minutes failing on some hops, not others) and open incidents from a
PagerDuty REST API on a real socket, answered with `--now` pinned to the data; and a live source
that is slow, down or answering garbage, after which the graph's answer still comes, saying so once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.pagerduty_api import TOKEN, PagerDutyApi, incident, pagerduty_api
from tests.fakes.prometheus_server import PrometheusServer
from tests.fakes.troubled_api import closed_url, troubled_api
from tests.service_graph_series import END, LIVE

ROOT = Path(__file__).resolve().parents[3]
CATALOG = str(ROOT / "tests" / "data" / "live" / "catalog.yaml")
CART, CHECKOUT, FRONTEND = "component:default/cart", "component:default/checkout", "component:default/frontend"
PAYMENTS, FRAUD, ORDERS_DB = "component:default/payments", "component:default/fraud-check", "resource:default/orders-db"
AT = END.isoformat().replace("+00:00", "Z")


@pytest.fixture(autouse=True)
def _fresh_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def pagerduty() -> Iterator[PagerDutyApi]:
    account = {
        "services": [], "business_services": [], "relationships": [],
        "incidents": [
            incident(4521, "cart 5xx above 5% <!channel>", "PCHECKOUT"),
            incident(4522, "payments slow", "PPAYMENTS", status="acknowledged"),
            incident(4400, "fraud-check queue full", "PFRAUD"),
            incident(4300, "yesterday's", "PCART", status="resolved"),
        ],
    }  # fmt: skip
    with pagerduty_api(account, page_size=2) as api:
        yield api


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_", "PAGER"))}
    settings = {"PYTHONPATH": str(ROOT), "ONCALL_GRAPH_SERVICE_GRAPH_PREFIX": LIVE, **env}
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "--now", AT, *args], capture_output=True, text=True, cwd=Path.cwd(),
        env={**base, **settings}, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done


def answer(*args: str, **env: str) -> dict[str, Any]:
    done = run(*args, "--json", **env)
    assert done.returncode == 0 and done.stdout.startswith("{"), done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def incidents_env(api: PagerDutyApi) -> dict[str, str]:
    return {"PAGERDUTY_API_TOKEN": TOKEN, "ONCALL_GRAPH_PAGERDUTY_API_URL": api.url}


def test_blast_radius_lists_what_is_failing_now_first_each_marked_by_its_hop_and_cited_once(
    service_graph_prometheus: PrometheusServer, pagerduty: PagerDutyApi
) -> None:
    sources = ("--catalog", CATALOG, "--service-graph", service_graph_prometheus.url)
    data = answer(*sources, "blast-radius", "orders-db", **incidents_env(pagerduty))
    order = [(i["entity"], i["hops"]) for i in data["impacted"]]
    assert order == [(FRAUD, 2), (CHECKOUT, 2), (CART, 1), (FRONTEND, 3)]
    live = {i["entity"]: i["live"] for i in data["impacted"]}
    checkout = live[CHECKOUT]
    assert (checkout["failed_share"], checkout["calls"], checkout["failed"], checkout["failing"]) == (
        0.12,
        500,
        60,
        True,
    )
    assert (checkout["edge"]["src"], checkout["edge"]["dst"], checkout["at"]) == (CHECKOUT, CART, AT)
    assert live[FRAUD]["failed_share"] == 0.5 and live[CART]["failing"] is False and live[CART]["calls"] == 1_000
    assert live[FRONTEND]["failed_share"] == 0.0 and live[FRONTEND]["edge"]["dst"] == CHECKOUT
    opened = {i["entity"]: [n["number"] for n in i["incidents"]] for i in data["impacted"]}
    assert opened == {FRAUD: [4400], CHECKOUT: [4521], CART: [], FRONTEND: []}
    host = service_graph_prometheus.url.removeprefix("http://")
    incidents_from = {"source": pagerduty.url.removeprefix("http://"), "error": None}
    cited = f"live: {host} at {END:%H:%M:%S} UTC (last 5 min) · open incidents: {incidents_from['source']}"
    assert data["live"] == {
        "source": host, "at": AT, "window": "5 min", "window_seconds": 300, "error": None, "failing": 2,
        "incidents": incidents_from, "said": cited,
    }  # fmt: skip

    text = run(*sources, "blast-radius", "orders-db", **incidents_env(pagerduty)).stdout.splitlines()
    assert "if orders-db goes down: 4 break, 0 degrade, 1 systems impacted · 2 already failing" in text
    assert text.index("now: failing, or with an open incident") < text.index("1 hop")
    assert "      now: checkout: 12% of calls to cart failing (last 5 min)" in text
    assert "      cart: calls to orders-db not failing yet (last 5 min)" in text
    opened_line = "      open incident #4521 cart 5xx above 5% <!channel> (triggered) https://acme.pagerduty.com/incidents/Q4521INC"
    assert opened_line in text
    assert text[-1] == cited


def test_suspects_rank_the_dependencies_failing_now_first_and_a_recent_deploy_says_so(
    service_graph_prometheus: PrometheusServer, pagerduty: PagerDutyApi, tmp_path: Path
) -> None:
    deploys = tmp_path / "deploys.jsonl"
    shipped = (END - timedelta(minutes=30)).isoformat().replace("+00:00", "Z")
    deploys.write_text(
        json.dumps({"id": "r-77", "service": "payments", "version": "v2", "deployed_at": shipped}) + "\n"
    )
    sources = ("--catalog", CATALOG, "--service-graph", service_graph_prometheus.url, "--deploys", str(deploys))
    data = answer(*sources, "suspects", "checkout", **incidents_env(pagerduty))
    assert [d["entity"] for d in data["dependencies"]] == [CART, PAYMENTS, ORDERS_DB]
    [payments] = [d for d in data["dependencies"] if d["entity"] == PAYMENTS]
    assert payments["live"]["failed_share"] == 0.05 and payments["incidents"][0]["number"] == 4522
    assert payments["deploys"][0]["reason"] == (
        "direct dependency, failing now (5% of calls from checkout failed) and open incident #4522"
    )
    assert data["live"]["failing"] == 2

    text = run(*sources, "suspects", "checkout", **incidents_env(pagerduty)).stdout
    assert "now: checkout: 5% of calls to payments failing (last 5 min)" in text
    assert "cart: calls to orders-db not failing yet (last 5 min)" in text


def test_ask_tells_what_is_failing_now_in_its_impact_and_dependency_sections(
    service_graph_prometheus: PrometheusServer,
) -> None:
    sources = ("--catalog", CATALOG, "--service-graph", service_graph_prometheus.url)
    data = answer(*sources, "ask", "what breaks if cart goes down?")
    [impact] = [s for s in data["sections"] if s["kind"] == "impact"]
    assert "Failing now: fraud-check: 50% of calls to cart failing (last 5 min); " in impact["lines"][-3]
    assert "checkout: 12% of calls to cart failing (last 5 min)." in impact["lines"][-3]
    assert impact["lines"][-2] == "Not failing yet (calling without errors): frontend."
    assert impact["lines"][-1].startswith("live: 127.0.0.1:") and data["live"]["error"] is None
    [deps] = [s for s in answer(*sources, "ask", "what does checkout depend on?")["sections"] if s["entities"]]
    assert any(line.startswith("Failing now: cart (checkout: 12% of calls to cart failing") for line in deps["lines"])
    owners = answer(*sources, "ask", "who owns cart?")  # nothing of what is failing is asked: no live part
    assert "live" not in owners


@pytest.mark.parametrize("trouble", ["slow", "down", "garbage"])
def test_a_live_source_in_trouble_leaves_the_graphs_answer_whole_and_says_so_in_one_line(
    trouble: str, pagerduty: PagerDutyApi
) -> None:
    slow = b'{"status": "success", "data": {"resultType": "vector", "result": []}}'
    body, delay = {"slow": (slow, 3.0), "garbage": (b"<html>502 Bad Gateway</html>", 0.0)}.get(trouble, (b"", 0.0))
    with troubled_api(delay=delay, body=body) as api:
        url = closed_url() if trouble == "down" else api.url
        env = {"ONCALL_GRAPH_HTTP_TIMEOUT": "1", "ONCALL_GRAPH_LIVE_DEADLINE": "0.5", **incidents_env(pagerduty)}
        env["PAGERDUTY_API_TOKEN"] = "not-the-token"
        sources = ("--catalog", CATALOG, "--service-graph", url)
        data = answer(*sources, "blast-radius", "payments", **env)
        text = run(*sources, "blast-radius", "payments", **env).stdout.splitlines()
    said = {"slow": "no answer within 0.5 s", "down": "ConnectError", "garbage": "the answer is not JSON"}[trouble]
    assert [i["entity"] for i in data["impacted"]] == [CHECKOUT] and data["impacted"][0]["live"] is None
    assert said in data["live"]["error"] and data["live"]["at"] is None and data["live"]["failing"] == 0
    assert "the token was refused" in data["live"]["incidents"]["error"]
    missing = [line for line in text if "missing" in line]
    assert len(missing) == 1 and missing == [text[-1]] and said in text[-1]
    assert text[-1].startswith("live data missing: ") and " · open incidents missing: " in text[-1]
    assert "✗ checkout  breaks  owners: team-shop" in " ".join(text)

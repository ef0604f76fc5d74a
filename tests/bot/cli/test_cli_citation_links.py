"""Citations that open their source, through the command line run as a subprocess: a catalog whose
descriptors say where they live (`backstage.io/view-url`, `backstage.io/source-location`), read,
stored and answered, each edge's `citations` giving the URL beside its `sources`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.bot.cli.test_cli_lag import _fresh_working_directory  # noqa: F401  (autouse: a database per test)
from tests.bot.cli.test_cli_lag import run as run_cli

ROOT = Path(__file__).resolve().parents[3]
CATALOG = str(ROOT / "tests" / "data" / "links" / "catalog")
CHECKOUT, PAYMENTS = "component:default/checkout", "component:default/payments"
LEDGER, STOREFRONT = "resource:default/ledger-db", "component:default/storefront"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli("--catalog", CATALOG, *args, **env)


def edges(answer: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["src"], e["dst"]): e for i in answer["impacted"] for e in i["edges"]}


def test_each_cited_edge_gives_where_its_descriptor_opens_beside_its_sources() -> None:
    done = run("blast-radius", "ledger-db", "--json")
    assert done.returncode == 0, done.stderr
    found = edges(json.loads(done.stdout))

    by_view_url = found[(PAYMENTS, LEDGER)]
    assert by_view_url["sources"] == ["catalog/teams/payments.yaml#2"]  # the contract's key, unchanged
    assert by_view_url["citations"] == [
        {"source": "catalog/teams/payments.yaml#2", "url": "https://git.example.com/acme/payments/blob/main/catalog-info.yaml"}
    ]  # fmt: skip
    # A source location joined with the document's path under the catalog root.
    by_location = found[(CHECKOUT, PAYMENTS)]
    assert by_location["citations"] == [
        {"source": "catalog/teams/payments.yaml#1",
         "url": "https://git.example.com/acme/catalog/tree/main/teams/payments.yaml"}
    ]  # fmt: skip
    # No annotation: the source is still cited, with nowhere to open.
    assert found[(STOREFRONT, CHECKOUT)]["citations"] == [{"source": "catalog/ledger.yaml#2", "url": None}]


def test_the_terminal_prints_each_url_beside_its_citation_and_never_a_hostile_one() -> None:
    done = run("suspects", "storefront")
    assert done.returncode == 0, done.stderr
    assert "↗ catalog/ledger.yaml#2" not in done.stdout  # no URL known
    done = run("blast-radius", "ledger-db")
    assert "↗ catalog/teams/payments.yaml#2 https://git.example.com/acme/payments/blob/main/catalog-info.yaml" in (
        done.stdout
    )
    assert "javascript:" not in done.stdout


def test_a_descriptor_with_no_file_url_cites_its_backstage_page_once_the_base_url_is_set() -> None:
    assert run("sync", "--json").returncode == 0
    before = edges(json.loads(run("blast-radius", "ledger-db", "--json").stdout))
    assert before[(STOREFRONT, CHECKOUT)]["citations"][0]["url"] is None

    # Setting the base URL reads the unchanged catalog again: its citations are what changed.
    backstage = {"ONCALL_GRAPH_BACKSTAGE_URL": "https://backstage.example.com/"}
    done = run("sync", "--json", **backstage)
    assert done.returncode == 0, done.stderr
    after = edges(json.loads(run("blast-radius", "ledger-db", "--json", **backstage).stdout))
    page = "https://backstage.example.com/catalog/default/component/storefront"
    assert after[(STOREFRONT, CHECKOUT)]["citations"] == [{"source": "catalog/ledger.yaml#2", "url": page}]
    # A file URL the catalog gives still wins over the page.
    assert after[(CHECKOUT, PAYMENTS)]["citations"][0]["url"].startswith("https://git.example.com/")


def test_a_backstage_url_that_is_no_http_url_is_refused_naming_the_setting() -> None:
    done = run("sync", ONCALL_GRAPH_BACKSTAGE_URL="javascript:alert(1)")
    assert done.returncode != 0
    assert "ONCALL_GRAPH_BACKSTAGE_URL: expected the Backstage base URL" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr

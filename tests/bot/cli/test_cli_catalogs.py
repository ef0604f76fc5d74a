"""Real catalogs and deploy feeds through the command line, run as a user would (a subprocess on a
real SQLite file): tests/data/catalog/sockshop and tests/data/deploys/sockshop cite their formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.cli.test_cli import run, run_json

DATA = Path(__file__).resolve().parents[2] / "data"
SHOP = DATA / "catalog" / "sockshop"
FEEDS = DATA / "deploys" / "sockshop"
SOURCES = [
    "--catalog", str(SHOP),
    "--deploys", str(FEEDS / "github_deployment_status.jsonl"),
    "--deploys", str(FEEDS / "pagerduty_events.jsonl"),
]  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_suspects_over_two_days_names_both_dates_and_the_commit_with_its_ref() -> None:
    done = run(*SOURCES, "--now", "2019-05-15T12:00:00Z", "suspects", "front-end", "--since", "48h")

    assert done.returncode == 0, done.stderr
    assert "deploys 2019-05-13 12:00 – 2019-05-15 12:00 UTC" in done.stdout
    assert "a1b2c3d [v0.4.7]" in done.stdout  # orders, which front-end consumes an API of


def test_suspects_within_one_day_names_the_date_once() -> None:
    done = run(*SOURCES, "--now", "2019-05-14T12:00:00Z", "suspects", "carts", "--since", "6h")

    assert "deploys 2019-05-14 06:00 – 12:00 UTC" in done.stdout


def test_json_deploys_carry_the_ref_and_the_graph_age_is_never_negative() -> None:
    code, data = run_json(*SOURCES, "--now", "2019-05-14T12:00:00Z", "suspects", "front-end", "--since", "6h")

    assert code == 0
    assert data["graph"]["age_seconds"] >= 0
    [orders] = [d for d in data["dependencies"] if d["entity"] == "component:default/orders"]
    by_id = {d["id"]: d for d in orders["deploys"]}
    assert by_id["gh-4100001"]["version"] == "a1b2c3d" and by_id["gh-4100001"]["ref"] == "v0.4.7"
    assert [d["id"] for d in data["own_deploys"]] == ["gh-4100002"]


def test_non_descriptors_and_alert_events_warn_only_about_what_is_wrong() -> None:
    done = run(*SOURCES, "resolve", "carts")

    assert done.returncode == 0
    assert "component:default/carts" in done.stdout
    assert "mkdocs" not in done.stderr and "openapi" not in done.stderr
    assert "pagerduty_events.jsonl:2: event_action: a PagerDuty alert event" in done.stderr
    assert "Traceback" not in done.stderr


def test_lint_counts_non_descriptors_and_reports_the_unmatched_change_event() -> None:
    code, data = run_json(*SOURCES, "lint")

    assert code == 0
    assert sorted(data["not_descriptors"]) == ["sockshop/docs/mkdocs.yml#1", "sockshop/openapi/orders.yaml#1"]
    [unmatched] = data["unresolved_deploys"]
    assert "pagerduty_events.jsonl:4" in unmatched and "routing_key matches no" in unmatched
    assert data["failed_sources"] == []


def test_sync_reports_change_events_that_match_no_entity() -> None:
    done = run(*SOURCES, "sync")

    assert done.returncode == 0, done.stderr
    assert "deploys naming no entity: 1" in done.stdout
    assert "pagerduty_events.jsonl:4" in done.stdout


def test_lint_lists_a_source_that_failed_with_its_first_problems_and_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "a.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: [x\n")
    (broken / "b.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Component\n")

    done = run(*SOURCES, "--catalog", str(broken), "lint")

    assert done.returncode == 2
    assert "sources that failed: 1" in done.stdout
    line = next(line for line in done.stdout.splitlines() if f"catalog:{broken}" in line)
    assert "broken/a.yaml:3:" in line and "broken/b.yaml#1" in line
    code, data = run_json("--catalog", str(SHOP), "--catalog", str(tmp_path / "missing"), "lint")
    assert code == 2
    assert [s["name"] for s in data["failed_sources"]] == [f"catalog:{tmp_path / 'missing'}"]

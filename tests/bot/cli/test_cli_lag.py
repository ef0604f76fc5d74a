"""`oncall-graph lag`, run as a subprocess: it syncs the sources given on the command line first,
and judges every source by the one verdict (past its limit, failing, or a change held)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.sync.held_catalog import MAX_DROP, write_catalog

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _fresh_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default database is ./oncall-graph.db


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_"))}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=Path.cwd(),
        env={**base, "PYTHONPATH": str(ROOT), **env}, timeout=120,
    )  # fmt: skip


def run_json(*args: str, **env: str) -> tuple[int, Any]:
    done = run(*args, "--json", **env)
    assert not done.stdout.startswith("Traceback"), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_lag_with_a_catalog_given_syncs_it_first(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "catalog")
    code, data = run_json("--catalog", catalog, "lag")
    assert code == 0 and data["stale"] is False
    [source] = data["sources"]
    assert source["name"] == f"catalog:{catalog}" and source["state"] == "ok" and source["stale"] is False
    assert source["last_success"] is not None and source["last_error"] == "" and source["age_seconds"] >= 0
    shown = run("--catalog", catalog, "lag").stdout
    assert f"OK  catalog:{catalog}" in shown and "all sources fresh" in shown and "never" not in shown


def test_lag_shows_a_held_change_with_its_problems_and_ages_from_the_applied_one(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "catalog")
    env = {"ONCALL_GRAPH_MAX_DROP": str(MAX_DROP)}
    _, first = run_json("--catalog", catalog, "lag", **env)
    applied_at = first["sources"][0]["last_success"]
    write_catalog(tmp_path / "catalog", broken=True)
    code, data = run_json("--catalog", catalog, "lag", **env)
    assert code == 0 and data["stale"] is True
    [source] = data["sources"]
    assert (source["state"], source["stale"], source["last_success"]) == ("held", True, applied_at)
    assert source["held"] == "would drop 3 of 13 facts (limit 20%)" and source["age_seconds"] > 0
    [problem] = source["problems"]
    assert "services.yaml#2" in problem and "is not read: skipped" in problem
    done = run("lag", **env)  # no sources given: reports the store as it stands, without syncing
    assert done.returncode == 0
    assert f"HELD  catalog:{catalog}" in done.stdout and "held for review: would drop 3 of 13 facts" in done.stdout
    assert "services.yaml#2" in done.stdout and done.stdout.rstrip().endswith("graph is stale")


def test_a_source_past_its_own_limit_is_stale_and_a_failing_one_too(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "catalog")
    missing = tmp_path / "missing.jsonl"
    run("--catalog", catalog, "--deploys", str(missing), "sync")
    limits = {"ONCALL_GRAPH_STALE_AFTER": f"catalog:{catalog}=0"}
    code, data = run_json("lag", **limits)
    by_name = {s["name"]: s for s in data["sources"]}
    assert code == 0 and data["stale"] is True
    assert by_name[f"catalog:{catalog}"]["state"] == "stale" and by_name[f"catalog:{catalog}"]["stale"] is True
    assert by_name[f"catalog:{catalog}"]["threshold_seconds"] == 0
    assert (
        by_name[f"deploys:{missing}"]["state"] == "failing"
        and "missing.jsonl" in by_name[f"deploys:{missing}"]["last_error"]
    )
    _, relaxed = run_json("lag", ONCALL_GRAPH_STALE_AFTER=f"catalog:{catalog}=3600")
    assert {s["name"]: s["state"] for s in relaxed["sources"]}[f"catalog:{catalog}"] == "ok"


def test_a_malformed_stale_limit_is_named_without_a_traceback() -> None:
    done = run("lag", ONCALL_GRAPH_STALE_AFTER="catalog=soon")
    assert done.returncode == 2 and "ONCALL_GRAPH_STALE_AFTER" in done.stderr and "Traceback" not in done.stderr

"""Every lag front shows a source's read problems, bounded, naming file, line or document, and field.

A copy of examples/acme's catalog with junk added (documents without `kind` or `metadata`, a name
breaking Backstage's rules, symlinks that loop, lead out of the folder or nowhere), synced into a real
SQLite file and a real PostgreSQL database; then the lag answer rendered by each front.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from bot.query.lag import answer_lag
from bot.query.replies import lag_lines
from bot.render.json import lag_json
from bot.slack.blocks.freshness import format_lag
from bot.telemetry.metrics import Metrics
from graph.health.freshness import FAILING, OK, StalePolicy
from graph.snapshot import SnapshotRef
from sync.refresh import sync_once
from sync.sources.registry import SourceSpec
from sync.store.fact_store import Store
from tests.sync.conftest import migrated_store

ACME = Path(__file__).resolve().parents[2] / "examples" / "acme" / "catalog"
T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
POLICY = StalePolicy(300.0)

JUNK = """\
apiVersion: backstage.io/v1alpha1
metadata: {name: no-kind}
---
apiVersion: backstage.io/v1alpha1
kind: Component
spec: {type: service}
---
apiVersion: backstage.io/v1alpha1
kind: Component
metadata: {name: "bad name!", namespace: default}
spec: {type: service, lifecycle: production, owner: team-a}
"""


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    yield from migrated_store(database_url)


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    shutil.copytree(ACME, tmp_path / "catalog")
    folder = tmp_path / "catalog"
    (folder / "junk.yaml").write_text(JUNK)
    (folder / "sub").mkdir()
    (folder / "sub" / "loop").symlink_to("..")
    (folder / "outside.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    (tmp_path / "elsewhere.yaml").write_text("kind: Component\nmetadata: {name: smuggled}\n")
    (folder / "dangling.yaml").symlink_to(tmp_path / "gone.yaml")
    return folder


def lag_after_sync(store: Store, catalog: Path, minutes: int = 0) -> tuple[str, object]:
    spec = SourceSpec("catalog", str(catalog))
    sync_once([spec], store, SnapshotRef(), lambda: T0 + timedelta(minutes=minutes))
    marks = [state.mark() for state in store.source_states().values()]
    now = T0 + timedelta(minutes=minutes, seconds=1)
    return spec.name, answer_lag(marks, [spec.name, "docs:never"], now, POLICY, store.live_problems())


def test_junk_documents_and_refused_links_are_warnings_of_a_fresh_source_in_every_front(
    store: Store, catalog: Path
) -> None:
    name, answer = lag_after_sync(store, catalog)
    report = answer.report  # type: ignore[attr-defined]
    [lag] = report.sources
    assert lag.state == OK  # junk does not fail the source
    found = lag.read_problems
    assert found is not None and found.errors >= 5
    data = lag_json(report)
    [judged, never] = data["sources"]
    problems = judged["read_problems"]["shown"]
    by_field = {(p["file"], p["document"], p["field"]) for p in problems}
    assert ("catalog/junk.yaml", 1, "kind") in by_field
    assert ("catalog/junk.yaml", 2, "metadata") in by_field
    assert ("catalog/junk.yaml", 3, "metadata.name") in by_field
    files = {p["file"] for p in problems}
    assert {"catalog/sub/loop", "catalog/outside.yaml", "catalog/dangling.yaml"} <= files
    assert judged["never_synced"] is False and judged["stale"] is False
    assert never["name"] == "docs:never" and never["never_synced"] is True and data["stale"] is True
    text = "\n".join(str(line) for line in lag_lines(data))
    assert "catalog/junk.yaml document 1, field kind" in text and "catalog/dangling.yaml" in text
    assert "docs:never" in text and "never synced" in text
    slack = str(format_lag(report).blocks)
    assert "catalog/junk.yaml document 2, field metadata" in slack and "catalog/sub/loop" in slack
    assert "docs:never" in slack and "never synced" in slack
    metrics = Metrics()
    metrics.watch_sources(lambda: report)
    exposed = generate_latest(metrics.registry).decode()
    assert f'oncall_graph_source_problems{{severity="error",source="{name}"}} {float(found.errors)}' in exposed
    assert 'oncall_graph_source_stale{source="docs:never"} 1.0' in exposed


def test_problems_are_bounded_and_the_rest_counted(store: Store, catalog: Path) -> None:
    many = "".join(f"---\napiVersion: backstage.io/v1alpha1\nmetadata: {{name: junk-{i}}}\n" for i in range(25))
    (catalog / "many.yaml").write_text(many)
    _, answer = lag_after_sync(store, catalog)
    data = lag_json(answer.report)  # type: ignore[attr-defined]
    found = data["sources"][0]["read_problems"]
    assert len(found["shown"]) == 10 and found["more"] == found["total"] - 10 and found["total"] >= 30
    text = "\n".join(str(line) for line in lag_lines(data))
    assert f"and {found['more']} more" in text


def test_an_unreadable_file_fails_the_source_and_names_the_file(store: Store, catalog: Path) -> None:
    lag_after_sync(store, catalog)
    (catalog / "edge.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata: {name: redis\n")
    _, answer = lag_after_sync(store, catalog, 5)
    [lag] = answer.report.sources  # type: ignore[attr-defined]
    assert lag.state == FAILING and "catalog/edge.yaml" in lag.last_error
    assert lag.read_problems is not None
    assert any(p.where.startswith("catalog/edge.yaml") and p.severity == "error" for p in lag.read_problems.shown)


def test_a_source_whose_first_attempt_failed_is_never_synced_with_the_reason_in_every_front(
    store: Store, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-catalog"
    name, answer = lag_after_sync(store, missing)
    report = answer.report  # type: ignore[attr-defined]
    [judged, never] = lag_json(report)["sources"]
    assert judged["name"] == name and judged["never_synced"] is True and judged["stale"] is True
    assert str(missing) in judged["last_error"]
    assert never["name"] == "docs:never" and never["never_synced"] is True
    slack = str(format_lag(report).blocks)
    assert "never synced (its first attempt failed)" in slack and str(missing) in slack
    assert "docs:never* — never synced" in slack
    text = "\n".join(str(line) for line in lag_lines(lag_json(report)))
    assert "never synced" in text and str(missing) in text


def test_graph_lag_says_how_much_the_graph_can_know() -> None:
    report = answer_lag([], [], T0, POLICY).report
    known = "0 of 499 components declare dependencies; no trace source is configured."
    text = str(format_lag(report, coverage=known).blocks)
    assert "*Coverage*: 0 of 499 components declare dependencies; no trace source is configured." in text

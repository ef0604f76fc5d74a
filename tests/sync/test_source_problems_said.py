"""What a sync skips or uses anyway is said everywhere an operator looks, once per change: a symlink
loop or a link out of the folder added to a synced catalog is a change (the read that says so
happens), its problems reach the lag answer, and each new problem is one line in the log, never
again at the next tick."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.query.lag import answer_lag
from graph.health.freshness import StalePolicy
from graph.snapshot import SnapshotRef
from sync.refresh import APPLIED, UNCHANGED, sync_once
from sync.sources.catalog_fetch import catalog_version
from sync.sources.registry import SourceSpec
from sync.sources.versions import local_version
from sync.store.fact_store import Store

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SERVICE = """\
apiVersion: backstage.io/v1alpha1
kind: Component
metadata: {{name: {name}}}
spec: {{type: service, lifecycle: production, owner: team-a}}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    catalog = tmp_path / "catalog"
    (catalog / "sub").mkdir(parents=True)
    (catalog / "payments.yaml").write_text(SERVICE.format(name="payments"))
    return catalog


def sync(store: Store, spec: SourceSpec, minutes: int) -> str:
    [outcome] = sync_once([spec], store, SnapshotRef(), lambda: T0 + timedelta(minutes=minutes)).outcomes
    return outcome.outcome


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    lines = [r.getMessage() for r in caplog.records if r.name == "sync.refresh"]
    caplog.clear()
    return lines


@pytest.mark.parametrize("version", [local_version, catalog_version])
def test_a_link_loop_or_out_added_to_a_folder_changes_its_version(folder: Path, version: object) -> None:
    before = version(str(folder))  # type: ignore[operator]
    (folder / "sub" / "loop").symlink_to("..")
    with_loop = version(str(folder))  # type: ignore[operator]
    (folder / "env.yaml").symlink_to("/proc/self/environ")
    with_both = version(str(folder))  # type: ignore[operator]
    assert len({before, with_loop, with_both}) == 3
    assert version(str(folder)) == with_both  # stable: /proc/self resolves anew in every process


def test_links_added_to_a_synced_catalog_reach_the_lag_answer_and_the_log_once(
    store: Store, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="sync.refresh")
    spec = SourceSpec("catalog", str(folder))
    assert sync(store, spec, 0) == APPLIED
    assert said(caplog) == []

    (folder / "sub" / "loop").symlink_to("..")
    (folder / "env.yaml").symlink_to("/proc/self/environ")
    assert sync(store, spec, 1) == APPLIED  # links alone: read again, though no file read changed
    lines = said(caplog)
    assert len(lines) == 2, lines
    assert any("catalog/sub/loop" in line and "symlink loop" in line for line in lines)
    assert any("catalog/env.yaml" in line and "symlink to /proc/self/environ, outside" in line for line in lines)

    (folder / "portal.yaml").write_text(SERVICE.format(name="dev--portal") + "---\n" + SERVICE.format(name="Bad_"))
    assert sync(store, spec, 1) == APPLIED
    [line] = said(caplog)  # only what is new: dev--portal is a fine name
    assert "catalog/portal.yaml#2: metadata.name: name 'Bad_' breaks Backstage's rule" in line
    marks = [state.mark() for state in store.source_states().values()]
    [lag] = answer_lag(marks, [spec.name], T0, StalePolicy(300.0), store.live_problems()).report.sources
    assert lag.read_problems is not None and lag.read_problems.total == 3
    assert {p.where for p in lag.read_problems.shown} == {
        "catalog/sub/loop",
        "catalog/env.yaml",
        "catalog/portal.yaml#2",
    }

    assert sync(store, spec, 2) == UNCHANGED  # the next ticks: nothing new, nothing said again
    assert sync(store, spec, 3) == UNCHANGED
    assert said(caplog) == []

    (folder / "more.yaml").write_text(SERVICE.format(name="refunds"))  # a change, with no new problem
    assert sync(store, spec, 4) == APPLIED
    assert said(caplog) == []

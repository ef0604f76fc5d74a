"""A feed that drips a byte a second is cut at its deadline; the other sources sync meanwhile."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graph.snapshot import SnapshotRef
from sync.refresh import APPLIED, FAILED, sync_once
from sync.sources.reading.limits import ReadLimits
from sync.sources.registry import SourceAccess, SourceSpec
from sync.store.fact_store import Store
from tests.fakes import dripping_feed as drips
from tests.fakes.http_source import source_server

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture(name="dripping_feed")
def dripping_feed_url() -> Iterator[str]:
    """A local HTTP server that promises a big deploy feed and sends it one byte every 0.2 s."""
    with drips.dripping_feed(0.2) as url:
        yield url


def test_a_dripping_feed_is_cut_at_its_deadline_and_delays_no_other_source(
    store: Store, dripping_feed: str, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "auth.md").write_text("The auth service depends on the token cache.\n")
    specs = [SourceSpec("deploys", dripping_feed), SourceSpec("docs", str(docs))]
    access = SourceAccess(timeout=1.0, limits=ReadLimits(deadline_seconds=1.5))
    started = time.monotonic()
    report = sync_once(specs, store, SnapshotRef(), lambda: T0, access=access)
    elapsed = time.monotonic() - started
    outcomes = {o.name: o for o in report.outcomes}
    drip, read = outcomes[f"deploys:{dripping_feed}"], outcomes[f"docs:{docs}"]
    assert drip.outcome == FAILED and "deadline" in drip.error
    assert read.outcome == APPLIED and read.items > 0
    assert read.seconds < drip.seconds  # the docs did not wait behind the feed
    assert elapsed < 30  # generous: the drip alone would take 100000 * 0.2 s = 5.5 hours
    assert "deadline" in store.source_states()[f"deploys:{dripping_feed}"].last_error


def test_a_body_past_the_byte_cap_fails_the_source(store: Store) -> None:
    with source_server() as server:
        url = server.serve("/deploys.jsonl", b"{}\n" * 40_000)
        access = SourceAccess(timeout=2.0, limits=ReadLimits(max_file_bytes=64 * 1024))
        report = sync_once([SourceSpec("deploys", url)], store, SnapshotRef(), lambda: T0, access=access)
    [outcome] = report.outcomes
    assert outcome.outcome == FAILED and "too big" in outcome.error and "120,000 bytes" in outcome.error

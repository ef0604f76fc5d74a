"""A feed that drips a byte a second is cut at its deadline; the other sources sync meanwhile."""

from __future__ import annotations

import socket
import threading
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
from tests.fakes.http_source import source_server

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture
def dripping_feed() -> Iterator[str]:
    """A local HTTP server that promises a big deploy feed and sends it one byte every 0.2 s."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    def drip(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n")
            try:
                while not stop.wait(0.2):
                    conn.sendall(b"{")
            except OSError:
                return  # the reader gave up: what we want

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/deploys.jsonl"
    stop.set()
    thread.join()
    listener.close()


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

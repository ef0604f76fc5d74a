"""A sync run against real files, a real local HTTP server, and a real database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graph.exposure.passages import passages_for
from graph.facts import SourceFacts
from graph.snapshot import SnapshotRef
from sync.refresh import APPLIED, FAILED, HELD, UNCHANGED, load_snapshot, sync_once
from sync.sources.registry import SourceAccess, SourceSpec
from sync.sources.versions import local_version
from sync.store.fact_store import Store
from tests.fakes.http_source import SourceServer, source_server

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def server() -> Iterator[SourceServer]:
    with source_server() as s:
        yield s


def deploy_lines(*ids: str) -> str:
    return "\n".join(
        json.dumps({"id": i, "service": "auth service", "deployed_at": "2026-11-29T11:00:00Z", "version": "v1"})
        for i in ids
    )


def write_docs(folder: Path, text: str) -> str:
    folder.mkdir(exist_ok=True)
    (folder / "auth.md").write_text(text)
    return str(folder)


def run(
    specs: list[SourceSpec], store: Store, clock: Clock, ref: SnapshotRef | None = None, **kw: float
) -> dict[str, str]:
    access = SourceAccess(timeout=kw.get("timeout", 2.0))
    report = sync_once(specs, store, ref or SnapshotRef(), clock, access=access)
    return {o.name: o.outcome for o in report.outcomes}


def test_url_source_unchanged_by_etag_is_not_parsed_again(store: Store, server: SourceServer, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", "The auth service depends on the token cache.")
    url = server.serve("/deploys", deploy_lines("r-1", "r-2"), etag='"v1"')
    specs, clock = [SourceSpec("docs", docs), SourceSpec("deploys", url)], Clock()
    assert run(specs, store, clock) == {f"docs:{docs}": APPLIED, f"deploys:{url}": APPLIED}
    clock.advance(minutes=5)
    assert run(specs, store, clock) == {f"docs:{docs}": UNCHANGED, f"deploys:{url}": UNCHANGED}
    assert server.hits("/deploys")[-1].get("If-None-Match") == '"v1"'
    assert store.source_states()[f"deploys:{url}"].last_success == clock.now


@pytest.mark.parametrize(
    ("status", "body", "delay"),
    [(500, "oops", 0.0), (200, "not json at all\n{{{", 0.0), (200, "", 3.0)],
    ids=["http-500", "garbage", "timeout"],
)
def test_failing_source_keeps_its_last_good_facts(
    store: Store, server: SourceServer, status: int, body: str, delay: float
) -> None:
    url = server.serve("/deploys", deploy_lines("r-1"))
    spec, clock, ref = SourceSpec("deploys", url), Clock(), SnapshotRef()
    sync_once([SourceSpec("docs", "/nonexistent")], store, ref, clock)  # a failing neighbour changes nothing
    assert run([spec], store, clock, ref) == {spec.name: APPLIED}
    server.serve("/deploys", body, status=status, delay=delay)
    clock.advance(minutes=5)
    assert run([spec], store, clock, ref, timeout=1.0) == {spec.name: FAILED}
    state = store.source_states()[spec.name]
    assert state.last_error and state.last_success == T0
    [facts] = store.load_facts()
    assert [d.id for d in facts.deploys] == ["r-1"]


def test_source_that_would_drop_most_facts_is_held_until_accepted(store: Store, server: SourceServer) -> None:
    url = server.serve("/deploys", deploy_lines("r-1", "r-2", "r-3", "r-4"))
    spec, clock = SourceSpec("deploys", url), Clock()
    run([spec], store, clock)
    server.serve("/deploys", "[]")
    clock.advance(minutes=5)
    assert run([spec], store, clock) == {spec.name: HELD}
    assert len(store.load_facts()[0].deploys) == 4
    assert "would drop 4 of 4" in store.source_states()[spec.name].held_reason
    store.accept_held(spec.name, at=clock(), actor="admin")
    assert store.load_facts() == [] or store.load_facts()[0].deploys == ()


def test_sync_swaps_in_a_snapshot_with_the_new_facts_and_as_of_sees_the_old(store: Store, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", "The checkout depends on payments.")
    spec, clock, ref = SourceSpec("docs", docs), Clock(), SnapshotRef()
    run([spec], store, clock, ref)
    first = ref.current()
    assert first is not None and "component:default/payments" in first.entities
    clock.advance(hours=1)
    write_docs(tmp_path / "docs", "The checkout depends on the ledger.")
    run([spec], store, clock, ref)
    second = ref.current()
    assert second is not first and second is not None
    assert second.edge("component:default/checkout", "depends_on", "component:default/ledger") is not None
    assert "component:default/payments" not in second.entities
    before = load_snapshot(store, clock, as_of=T0 + timedelta(minutes=30))
    assert before is not None
    assert before.edge("component:default/checkout", "depends_on", "component:default/payments") is not None


def test_runbook_passages_are_stored_and_a_restart_links_them_again(store: Store, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", "# Token cache\n\nThe auth service depends on the token cache.\n")
    spec, clock, ref = SourceSpec("docs", docs), Clock(), SnapshotRef()
    run([spec], store, clock, ref)
    synced = ref.current()
    assert synced is not None
    restarted = load_snapshot(store, clock)  # what a new replica or a restart builds from the store alone
    assert restarted is not None and restarted.passages == synced.passages
    [passage] = passages_for(restarted, "component:default/token-cache")
    assert (passage.locator, passage.line) == ("docs/auth.md §Token cache", 3)
    assert passages_for(restarted, "component:default/auth-service") == (passage,)


def test_docs_synced_before_passages_existed_are_read_once_more(store: Store, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", "The auth service depends on the token cache.\n")
    spec, clock = SourceSpec("docs", docs), Clock()
    store.ensure_source(spec.name, spec.kind, spec.location)
    old_version = local_version(docs)  # what an older oncall-graph recorded for these files
    store.apply(spec.name, SourceFacts(spec.name), at=T0, version=old_version)
    assert run([spec], store, clock)[spec.name] == APPLIED
    assert [p.text for p in store.load_facts()[0].passages] == ["The auth service depends on the token cache."]
    clock.advance(minutes=1)
    assert run([spec], store, clock)[spec.name] == UNCHANGED

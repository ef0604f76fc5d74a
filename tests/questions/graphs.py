"""The graphs the question set is asked over: the bundled ACME example and a generated catalog of
word-named services, each synced into a real SQLite file and loaded as the bot loads it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bench.generate import Scenario, ensure_catalog
from graph.snapshot import Snapshot, SnapshotRef
from sync.refresh import load_snapshot, sync_once
from sync.sources.registry import SourceSpec
from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store

ROOT = Path(__file__).resolve().parents[2]
ACME = ROOT / "examples" / "acme"
NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
NAMED = Scenario("named-1k", "named", 1_000)


def _clock() -> datetime:
    return NOW


def synced(specs: list[SourceSpec], db: Path) -> Snapshot:
    engine = make_engine(f"sqlite:///{db}")
    migrate(engine)
    store = Store(engine)
    try:
        sync_once(specs, store, SnapshotRef(), _clock, swap=False)
        snapshot = load_snapshot(store, _clock)
    finally:
        engine.dispose()
    assert snapshot is not None
    return snapshot


def acme(folder: Path) -> Snapshot:
    specs = [
        SourceSpec("catalog", str(ACME / "catalog")), SourceSpec("deploys", str(ACME / "deploys.jsonl")),
        SourceSpec("docs", str(ACME / "runbooks")), SourceSpec("triples", str(ACME / "triples.json")),
        SourceSpec("aliases", str(ACME / "aliases.yaml")),
    ]  # fmt: skip
    return synced(specs, folder / "acme.db")


def named(folder: Path) -> Snapshot:
    catalog = ensure_catalog(NAMED, out=folder)
    return synced([SourceSpec("catalog", str(catalog.folder))], folder / "named.db")

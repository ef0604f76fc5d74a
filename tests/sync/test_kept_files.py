"""A file of a folder source that fails to read keeps its last good facts and makes the source fail.

A copy of examples/acme's catalog, where `redis` lives in `catalog/edge.yaml`, on a real SQLite
file and a real PostgreSQL database.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graph.health.freshness import FAILING, OK, StalePolicy, judge
from graph.snapshot import SnapshotRef
from sync.refresh import APPLIED, FAILED, load_snapshot, sync_once
from sync.sources.reading.limits import ReadLimits
from sync.sources.registry import SourceAccess, SourceSpec
from sync.sources.trace_options import DAY, TraceOptions
from sync.store.fact_store import Store, source_marks
from tests.sync.sources.test_otlp import call_pair, document, write_lines
from tests.sync.sources.test_yaml_alias_bound import bomb

ACME = Path(__file__).resolve().parents[2] / "examples" / "acme" / "catalog"
T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
REDIS = "resource:default/redis"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    shutil.copytree(ACME, tmp_path / "catalog")
    return tmp_path / "catalog"


def sync(store: Store, catalog: Path, minutes: int, limits: ReadLimits | None = None) -> tuple[str, str]:
    spec = SourceSpec("catalog", str(catalog))
    access = SourceAccess(timeout=2.0, limits=limits or ReadLimits())
    report = sync_once([spec], store, SnapshotRef(), lambda: T0 + timedelta(minutes=minutes), access=access)
    [outcome] = report.outcomes
    return outcome.outcome, outcome.error


def has_redis(store: Store) -> bool:
    """Whether redis is defined (not only a placeholder for the refs that name it), by edge.yaml."""
    snapshot = load_snapshot(store, lambda: T0)
    redis = snapshot.entities.get(REDIS) if snapshot is not None else None
    return redis is not None and not redis.placeholder and redis.citation.locator.startswith("catalog/edge.yaml")


def verdict(store: Store, minutes: int) -> str:
    [lag] = judge(
        source_marks(store.source_states().values()).values(), T0 + timedelta(minutes=minutes), StalePolicy()
    ).sources
    return lag.state


BROKEN = {
    "invalid YAML": "apiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata: {name: redis\n",
    "emptied": "",
    "comments only": "# emptied by a bad merge\n",
    "an alias bomb": bomb(),
}


@pytest.mark.parametrize("content", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_file_keeps_its_entities_and_the_source_fails_naming_it(
    store: Store, catalog: Path, content: str
) -> None:
    assert sync(store, catalog, 0) == (APPLIED, "")
    (catalog / "edge.yaml").write_text(content)
    outcome, error = sync(store, catalog, 5)
    assert outcome == FAILED
    assert "catalog/edge.yaml" in error and "last good facts kept" in error
    assert has_redis(store)
    assert verdict(store, 5) == FAILING
    assert store.source_states()[f"catalog:{catalog}"].last_error == error
    # Still broken at the next sync: read again (no stored version makes it look unchanged), still failing.
    assert sync(store, catalog, 10)[0] == FAILED
    assert verdict(store, 10) == FAILING and has_redis(store)
    shutil.copy(ACME / "edge.yaml", catalog / "edge.yaml")
    assert sync(store, catalog, 15) == (APPLIED, "")
    assert verdict(store, 15) == OK and has_redis(store)


def test_a_broken_document_keeps_the_whole_file_as_it_last_read(store: Store, catalog: Path) -> None:
    sync(store, catalog, 0)
    with (catalog / "edge.yaml").open("a") as handle:
        handle.write("---\nkind: Component\nmetadata: [unclosed\n")
    outcome, error = sync(store, catalog, 5)
    assert outcome == FAILED and "catalog/edge.yaml:62:11" in error and "not valid YAML" in error
    assert has_redis(store)


def test_other_files_still_apply_while_one_is_broken(store: Store, catalog: Path) -> None:
    sync(store, catalog, 0)
    (catalog / "edge.yaml").write_text("{{{")
    extra = "apiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata: {name: memcached}\nspec: {type: cache}\n"
    (catalog / "cache.yaml").write_text(extra)
    assert sync(store, catalog, 5)[0] == FAILED
    snapshot = load_snapshot(store, lambda: T0)
    assert snapshot is not None
    assert "resource:default/memcached" in snapshot.entities and REDIS in snapshot.entities


def test_an_oversized_file_is_skipped_and_keeps_its_facts(store: Store, catalog: Path) -> None:
    limits = ReadLimits(max_file_bytes=64 * 1024)
    sync(store, catalog, 0, limits)
    with (catalog / "edge.yaml").open("a") as handle:
        handle.write("# padding\n" * 10_000)
    outcome, error = sync(store, catalog, 5, limits)
    assert outcome == FAILED and "too big" in error and "catalog/edge.yaml" in error
    assert has_redis(store)


def test_a_deleted_file_retires_its_entities(store: Store, catalog: Path) -> None:
    sync(store, catalog, 0)
    (catalog / "edge.yaml").unlink()
    assert sync(store, catalog, 5) == (APPLIED, "")
    assert not has_redis(store)
    assert verdict(store, 5) == OK


def test_a_new_broken_file_with_nothing_to_keep_still_fails_the_source(store: Store, catalog: Path) -> None:
    sync(store, catalog, 0)
    (catalog / "new.yaml").write_text("kind: [oops\n")
    outcome, error = sync(store, catalog, 5)
    assert outcome == FAILED and "catalog/new.yaml" in error and "no earlier facts to keep" in error
    assert has_redis(store)


def test_a_file_emptied_while_another_grows_keeps_its_entities(store: Store, catalog: Path) -> None:
    """The read's count does not fall (the new file adds more than the emptied one held), yet the
    emptied file is caught: its entities stay and the source fails naming it."""
    assert sync(store, catalog, 0) == (APPLIED, "")
    (catalog / "edge.yaml").write_text("")
    grown = "".join(
        f"---\napiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {{name: extra-{i}}}\n"
        f"spec: {{type: service, lifecycle: production, owner: group:default/platform}}\n"
        for i in range(40)
    )
    (catalog / "storefront.yaml").write_text((ACME / "storefront.yaml").read_text() + grown)
    outcome, error = sync(store, catalog, 5)
    assert outcome == FAILED and "catalog/edge.yaml" in error and "emptied" in error
    assert has_redis(store)
    assert verdict(store, 5) == FAILING


def test_a_trace_folder_is_read_as_a_whole_its_edges_counting_calls_across_files(store: Store, tmp_path: Path) -> None:
    """An observed edge cites one call of one file, and that file changes as traces come and go: a file
    that no longer holds a cited call is no emptied file, and a broken one is its problems."""
    folder = tmp_path / "traces"
    folder.mkdir()
    write_lines(folder / "a.jsonl", document(*call_pair("api", "cart", "01")))
    both = (("cart", "02"), ("orders", "03"), ("search", "04"))
    write_lines(folder / "b.jsonl", *(document(*call_pair("api", peer, n)) for peer, n in both))
    spec = SourceSpec("otlp", str(folder))
    access = SourceAccess(traces=TraceOptions(window_seconds=DAY, min_calls=1))

    def synced(minutes: int) -> tuple[str, str, set[tuple[str, int]]]:
        clock = lambda: T0 + timedelta(minutes=minutes)  # noqa: E731
        [outcome] = sync_once([spec], store, SnapshotRef(), clock, max_drop=0.9, access=access).outcomes
        calls = {(key.rpartition(": ")[2], count.calls) for key, count in store.load_calls([spec.name]).items()}
        return outcome.outcome, outcome.error, calls

    assert synced(0) == (APPLIED, "", {("api -> cart", 2), ("api -> orders", 1), ("api -> search", 1)})
    # b.jsonl now calls cart only: its edges retire, and cart is still cited at a.jsonl.
    write_lines(folder / "b.jsonl", document(*call_pair("api", "cart", "05")))
    assert synced(5) == (APPLIED, "", {("api -> cart", 2)})
    (folder / "a.jsonl").write_text("{not json\n")
    outcome, error, calls = synced(10)
    assert (outcome, error, calls) == (APPLIED, "", {("api -> cart", 1)})
    problems = load_snapshot(store, lambda: T0).problems  # type: ignore[union-attr]
    assert [p.where for p in problems if p.severity == "error"] == ["traces/a.jsonl:1"]

"""read_catalog_rows, the store's fast way to read a catalog, gives exactly what encoding read_catalog gives."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from graph.facts import SourceFacts
from graph.snapshot import SnapshotRef
from sync.refresh import APPLIED, HELD, fact_count, sync_once
from sync.sources.catalog import read_catalog, read_catalog_rows
from sync.sources.registry import SourceSpec
from sync.store import schema
from sync.store.database import make_engine, migrate
from sync.store.fact_codec import EncodedFacts, encode_rows
from sync.store.fact_store import Store
from tests.sync.sources.test_catalog import ACME, REFERENCE, RESOURCE, write

SERIAL, POOLED = 1 << 40, 0  # parallel_min_bytes: never / always in worker processes
T0 = datetime(2026, 11, 29, tzinfo=UTC)


def assert_same_as_read_catalog(location: str, parallel_min_bytes: int = SERIAL) -> EncodedFacts | SourceFacts:
    fast = read_catalog_rows("catalog", location, parallel_min_bytes=parallel_min_bytes)
    facts = read_catalog("catalog", location)
    assert list(encode_rows(fast)) == list(encode_rows(facts))
    assert fact_count(fast) == fact_count(facts)
    assert fast.problems == facts.problems
    return fast


@pytest.mark.parametrize("parallel_min_bytes", [SERIAL, POOLED])
@pytest.mark.parametrize("catalog", [ACME, REFERENCE, REFERENCE / "catalog-info.yaml"])
def test_example_catalogs_read_into_the_same_rows(catalog: Path, parallel_min_bytes: int) -> None:
    assert isinstance(assert_same_as_read_catalog(str(catalog), parallel_min_bytes), EncodedFacts)


def api_entity(kind: str, name: str, spec: dict[str, object]) -> str:
    document = {"apiVersion": "backstage.io/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec}
    return yaml.safe_dump(document)


@pytest.mark.parametrize("parallel_min_bytes", [SERIAL, POOLED])
def test_what_crosses_files_is_merged_as_read_catalog_does(tmp_path: Path, parallel_min_bytes: int) -> None:
    """Duplicates across files, API edges between files, problems of files and of documents, in order."""
    root = tmp_path / "catalog"
    shutil.copytree(ACME, root / "acme")
    provider = api_entity("Component", "provider", {"type": "service", "lifecycle": "x", "providesApis": ["pay"]})
    consumer = api_entity("Component", "consumer", {"consumesApis": ["pay", "api:default/pay"], "dependsOn": ["db"]})
    both = api_entity("Component", "both", {"providesApis": ["pay"], "consumesApis": ["pay"], "owner": {"x": 1}})
    write(root / "a.yaml", provider + "---\n" + RESOURCE.format(name="db") + "---\nkind: Location\n")
    write(root / "b" / "c.yaml", consumer + "---\n" + RESOURCE.format(name="db") + "---\n- not a mapping\n")
    write(root / "b" / "d.yml", both + "---\napiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata: {name: [x\n")
    write(root / "e.yaml", b"\xff\xfe not utf-8")
    fast = assert_same_as_read_catalog(str(root), parallel_min_bytes)
    assert any("duplicate entity resource:default/db" in p.message for p in fast.problems)


def test_a_folder_without_descriptors_and_a_missing_path_behave_as_read_catalog(tmp_path: Path) -> None:
    assert assert_same_as_read_catalog(str(tmp_path)).problems[0].message == "no *.yaml, *.yml or *.json files found"
    with pytest.raises(FileNotFoundError, match="nowhere"):
        read_catalog_rows("catalog", str(tmp_path / "nowhere"))


refs = st.sampled_from(["a", "b", "api:a", "ns/b", "group:t", "component:other/a", "", " ", ":x", "k:", 3, None])
ref_fields = st.sampled_from(
    ["owner", "system", "dependsOn", "dependencyOf", "providesApis", "consumesApis", "children", "memberOf", "parent"]
)
documents = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["backstage.io/v1alpha1", "backstage.io/v1beta1", "other/v1"]),
        "kind": st.sampled_from(["Component", "Resource", "API", "System", "Group", "User", "Location", "Thing"]),
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(["a", "b", "A", "bad name", ""])},
            optional={
                "namespace": st.sampled_from(["default", "ns", "Other"]),
                "title": st.sampled_from(["A title", "", 5]),
                "annotations": st.sampled_from([{"oncall-graph/aliases": "x, y,x"}, {"a": 1}, "no"]),
            },
        ),
        "spec": st.dictionaries(ref_fields, st.one_of(refs, st.lists(refs, max_size=3)), max_size=4),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(documents, min_size=1, max_size=4), min_size=1, max_size=3))
def test_any_catalog_reads_into_the_same_rows_problems_and_count(tmp_path: Path, files: list[list[object]]) -> None:
    root = tmp_path / "catalog"
    shutil.rmtree(root, ignore_errors=True)
    for index, file_documents in enumerate(files):
        write(root / f"f{index}.yaml", yaml.safe_dump_all(file_documents))
    assert_same_as_read_catalog(str(root))


def stored_rows(facts: SourceFacts | EncodedFacts) -> list[tuple[str, str, str]]:
    store = Store(make_engine("sqlite://"))
    migrate(store.engine)
    store.ensure_source("catalog", "catalog", "here")
    applied = store.apply("catalog", facts, at=T0, version="v1")
    assert applied.added == applied.items
    f = schema.facts
    with store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(select(f.c.kind, f.c.fact_key, f.c.payload).order_by(f.c.id))]


def test_the_store_keeps_the_same_rows_in_the_same_order() -> None:
    assert stored_rows(read_catalog_rows("catalog", str(ACME))) == stored_rows(read_catalog("catalog", str(ACME)))


def test_a_catalog_folder_syncs_holds_and_is_accepted_through_its_rows(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "catalog"
    shutil.copytree(ACME, root)
    spec = SourceSpec("catalog", str(root))
    report = sync_once([spec], store, SnapshotRef(), lambda: T0)
    (outcome,) = report.outcomes
    assert (outcome.outcome, outcome.added, outcome.items) == (APPLIED, outcome.items, fact_count(read(root)))
    kept = sorted(root.glob("*.yaml"))[0]
    for path in root.glob("*.yaml"):
        if path != kept:
            path.unlink()
    (held,) = sync_once([spec], store, SnapshotRef(), lambda: T0 + timedelta(hours=1)).outcomes
    assert held.outcome == HELD
    applied = store.accept_held(spec.name, at=T0 + timedelta(hours=2), actor="admin")
    assert applied is not None and applied.items == len(set(encode_rows(read(root))))
    [facts] = store.load_facts()
    assert list(encode_rows(facts)) == list(encode_rows(read(root)))


def read(root: Path) -> SourceFacts:
    return read_catalog(f"catalog:{root}", str(root))

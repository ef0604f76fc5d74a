"""A catalog source that yields no entity fails, naming why, and keeps its last good facts: a folder
of mkdocs.yml, Helm values and Templates, or a catalog API answering `[]`, is no catalog."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graph.snapshot import SnapshotRef
from sync.refresh import APPLIED, FAILED, sync_once
from sync.sources.catalog import NO_ENTITY, parse_catalog_api, read_catalog, read_catalog_rows
from sync.sources.registry import SourceSpec
from sync.store.fact_store import Store
from tests.fakes.http_source import SourceServer, source_server

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SERVICE = """\
apiVersion: backstage.io/v1alpha1
kind: Component
metadata: {name: payments}
spec: {type: service, lifecycle: production, owner: team-a}
"""
# Documents a catalog repository holds beside its descriptors, none of them an entity read here.
NOT_ENTITIES = {
    "mkdocs.yml": "site_name: Payments\nnav: [index.md]\n",
    "values.yaml": "replicaCount: 2\nimage: {repository: payments}\n",
    "template.yaml": "apiVersion: scaffolder.backstage.io/v1beta3\nkind: Template\nmetadata: {name: svc}\nspec: {}\n",
}


@pytest.fixture
def server() -> Iterator[SourceServer]:
    with source_server() as s:
        yield s


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("read", [read_catalog, read_catalog_rows])
def test_a_folder_of_no_descriptors_is_an_error_naming_it(tmp_path: Path, read: object) -> None:
    folder = write(tmp_path / "docs", NOT_ENTITIES)
    problems = read("catalog", str(folder)).problems  # type: ignore[operator]
    errors = [p for p in problems if p.severity == "error"]
    assert [(p.where, p.message) for p in errors] == [(str(folder), NO_ENTITY)]


def test_a_catalog_api_answering_no_entity_is_an_error_naming_the_url() -> None:
    facts = parse_catalog_api("catalog", "https://backstage.example.com/api/catalog/entities?token=x", "[]")
    assert [(p.where, p.severity) for p in facts.problems] == [
        ("https://backstage.example.com/api/catalog/entities", "error")
    ]


def test_a_source_that_yields_no_entity_fails_and_keeps_its_last_good_facts(store: Store, tmp_path: Path) -> None:
    folder = write(tmp_path / "catalog", {"payments.yaml": SERVICE})
    spec, ref = SourceSpec("catalog", str(folder)), SnapshotRef()
    report = sync_once([spec], store, ref, lambda: T0)
    assert [o.outcome for o in report.outcomes] == [APPLIED]

    (folder / "payments.yaml").unlink()
    write(folder, NOT_ENTITIES)  # a bad merge: the descriptor gone, only what sat beside it left
    report = sync_once([spec], store, ref, lambda: T0 + timedelta(minutes=5))

    [outcome] = report.outcomes
    assert outcome.outcome == FAILED and NO_ENTITY in outcome.error
    state = store.source_states()[spec.name]
    assert state.last_success == T0 and NO_ENTITY in state.last_error
    [facts] = store.load_facts()
    assert [e.ref for e in facts.entities] == ["component:default/payments"]


def test_a_catalog_api_answering_no_entity_fails_and_keeps_its_last_good_facts(
    store: Store, server: SourceServer
) -> None:
    api = '[{"apiVersion": "backstage.io/v1alpha1", "kind": "Component", "metadata": {"name": "payments"},'
    api += ' "spec": {"type": "service", "lifecycle": "production", "owner": "team-a"}}]'
    url = server.serve("/api/catalog/entities", api)
    spec, ref = SourceSpec("catalog", url), SnapshotRef()
    assert [o.outcome for o in sync_once([spec], store, ref, lambda: T0).outcomes] == [APPLIED]

    server.serve("/api/catalog/entities", "[]")
    [outcome] = sync_once([spec], store, ref, lambda: T0 + timedelta(minutes=5)).outcomes

    assert outcome.outcome == FAILED and NO_ENTITY in outcome.error
    [facts] = store.load_facts()
    assert [e.ref for e in facts.entities] == ["component:default/payments"]

"""A ref a person types follows the contract: no namespace means `default`; a bare name that several
namespaces share asks back with each candidate (tests/data/catalog/namespaces/org.yaml)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from graph.build import build_snapshot
from graph.naming.names import resolve
from graph.snapshot import Snapshot
from sync.sources.catalog import read_catalog

ORG = Path(__file__).resolve().parents[2] / "data" / "catalog" / "namespaces"


@pytest.fixture(scope="module")
def org() -> Snapshot:
    return build_snapshot([read_catalog("catalog", str(ORG))], built_at=datetime(2026, 12, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("typed", "entity"),
    [
        ("user:guest", "user:default/guest"),
        ("User:Guest", "user:default/guest"),
        ("user:default/guest", "user:default/guest"),
        ("user:development/guest", "user:development/guest"),
        ("development/guest", "user:development/guest"),
        ("group:guests", "group:default/guests"),
    ],
)
def test_a_typed_ref_without_namespace_means_default(org: Snapshot, typed: str, entity: str) -> None:
    assert resolve(org.aliases, typed).entity == entity


def test_a_bare_name_shared_by_namespaces_asks_back_with_each_candidate(org: Snapshot) -> None:
    found = resolve(org.aliases, "guest")

    assert found.ambiguous
    assert found.candidates == ("user:default/guest", "user:development/guest")


def test_a_typed_ref_naming_no_default_entity_does_not_take_another_namespace(org: Snapshot) -> None:
    found = resolve(org.aliases, "component:sandbox")

    assert found.entity is None
    assert "component:development/sandbox" in found.suggestions

"""Descriptors Backstage's catalog refuses are still read, each with a warning naming the document and
the field: one-field variants of an entity Backstage accepts, written from its descriptor format
(https://backstage.io/docs/features/software-catalog/descriptor-format)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graph.facts import SourceFacts
from sync.sources.catalog import parse_catalog, parse_catalog_api, read_catalog, read_catalog_rows
from sync.store.fact_codec import EncodedFacts

REFUSED = "Backstage refuses this entity"

COMPONENT: dict[str, Any] = {
    "apiVersion": "backstage.io/v1alpha1",
    "kind": "Component",
    "metadata": {
        "name": "payments",
        "namespace": "shop",
        "title": "Payments",
        "description": "Takes the money",
        "labels": {"tier": "gold", "example.com/cost-center": "cc-1"},
        "annotations": {"backstage.io/techdocs-ref": "dir:.", "pagerduty.com/service-id": "PX1"},
        "tags": ["java", "c++", "tier:1"],
        "links": [{"url": "https://grafana.example.com/d/payments", "title": "Dashboard", "icon": "dashboard"}],
    },
    "spec": {
        "type": "service",
        "lifecycle": "production",
        "owner": "group:shop/payments-team",
        "system": "checkout",
        "dependsOn": ["resource:shop/payments-db"],
        "providesApis": ["payments-api"],
    },
}
API: dict[str, Any] = {
    "apiVersion": "backstage.io/v1beta1",
    "kind": "API",
    "metadata": {"name": "payments-api", "namespace": "shop"},
    "spec": {
        "type": "openapi",
        "lifecycle": "production",
        "owner": "payments-team",
        "definition": {"$text": "./openapi.yaml"},  # a placeholder Backstage reads in before it checks
    },
}


def changed(base: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    """`base` with the field at a dotted `path` set to `value` (or removed when `value` is DROP)."""
    document = copy.deepcopy(base)
    *parents, last = path.split(".")
    holder = document
    for key in parents:
        holder = holder[key]
    if value is DROP:
        del holder[last]
    else:
        holder[last] = value
    return document


DROP = object()


def component(path: str, value: object) -> dict[str, Any]:
    return changed(COMPONENT, path, value)


# (variant, the document, the field warned about)
VARIANTS: list[tuple[str, dict[str, Any], str]] = [
    ("upper-case namespace", component("metadata.namespace", "Shop"), "metadata.namespace"),
    ("lower-case kind", component("kind", "component"), "kind"),
    ("upper-case kind", component("kind", "COMPONENT"), "kind"),
    ("apiVersion v1", component("apiVersion", "backstage.io/v1"), "apiVersion"),
    ("apiVersion v2alpha1", component("apiVersion", "backstage.io/v2alpha1"), "apiVersion"),
    ("empty type", component("spec.type", ""), "spec.type"),
    ("empty title", component("metadata.title", ""), "metadata.title"),
    ("API without definition", changed(API, "spec.definition", DROP), "spec.definition"),
    ("malformed annotation key", component("metadata.annotations", {"bad key": "x"}), "metadata.annotations.bad key"),
    ("malformed label value", component("metadata.labels", {"tier": "gold plated"}), "metadata.labels.tier"),
    ("malformed tag", component("metadata.tags", ["Java"]), "metadata.tags[0]"),
    ("relations in a descriptor", component("relations", []), "relations"),
    ("status in a descriptor", component("status", {"items": []}), "status"),
    ("unknown root field", component("owner", "payments-team"), "owner"),
    ("no owner", component("spec.owner", DROP), "spec.owner"),
    ("no lifecycle", component("spec.lifecycle", DROP), "spec.lifecycle"),
    ("lifecycle not text", component("spec.lifecycle", 3), "spec.lifecycle"),
    ("one dependency not in a list", component("spec.dependsOn", "resource:shop/payments-db"), "spec.dependsOn"),
    ("compound owner", component("spec.owner", {"kind": "Group", "name": "payments-team"}), "spec.owner"),
    ("empty dependency", component("spec.dependsOn", [""]), "spec.dependsOn[0]"),
    ("link without a scheme", component("metadata.links", [{"url": "grafana.example.com"}]), "metadata.links[0].url"),
    (
        "blank link title",
        component("metadata.links", [{"url": "https://x.example", "title": " "}]),
        "metadata.links[0].title",
    ),
    ("spec missing", component("spec", DROP), "spec"),
    ("system written empty", component("spec.system", None), "spec.system"),
    ("description not text", component("metadata.description", ["a", "b"]), "metadata.description"),
]


def parse(*documents: object) -> SourceFacts:
    return parse_catalog("catalog", [(f"cat.yaml#{i}", doc) for i, doc in enumerate(documents, 1)])


def test_the_base_entities_are_read_without_a_word() -> None:
    facts = parse(COMPONENT, API)
    assert [e.ref for e in facts.entities] == ["component:shop/payments", "api:shop/payments-api"]
    assert facts.problems == ()


@pytest.mark.parametrize(("document", "field"), [v[1:] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_what_backstage_refuses_is_read_with_a_warning_naming_document_and_field(
    document: dict[str, Any], field: str
) -> None:
    facts = parse(document)
    assert len(facts.entities) == 1  # read anyway: the on-call answer still has it
    warned = [p for p in facts.problems if REFUSED in p.message]
    assert [(p.where, p.field) for p in warned] == [("cat.yaml#1", field)]
    assert "error" not in {p.severity for p in warned if p.field != "spec.dependsOn[0]"}


def test_a_refused_kind_or_namespace_says_how_it_was_read() -> None:
    facts = parse(changed(changed(COMPONENT, "kind", "COMPONENT"), "metadata.namespace", "Shop"))
    assert [e.ref for e in facts.entities] == ["component:shop/payments"]
    said = {p.field: p.message for p in facts.problems}
    assert said["kind"].endswith(f"(kinds are case-sensitive): {REFUSED}; read as a component")
    assert said["metadata.namespace"].endswith(f"{REFUSED}; read as 'shop'")


def test_an_empty_title_gives_no_alias_and_a_dropped_owner_no_owner_edge() -> None:
    facts = parse(changed(changed(COMPONENT, "metadata.title", ""), "spec.owner", DROP))
    assert [c.alias for c in facts.aliases] == ["PX1"]
    assert not [a for a in facts.assertions if a.rel == "owned_by"]


def test_catalog_api_responses_carry_relations_and_status_without_a_warning(tmp_path: Path) -> None:
    served = changed(COMPONENT, "relations", [{"type": "ownedBy", "targetRef": "group:shop/payments-team"}])
    served = changed(served, "status", {"items": []})
    served["metadata"] |= {"uid": "1f1d", "etag": "e1"}
    body = json.dumps([served, API])
    assert parse_catalog_api("catalog", "https://backstage.example.com/api/catalog/entities", body).problems == ()
    (tmp_path / "entities.json").write_text(body)
    (tmp_path / "one-entity.json").write_text(json.dumps(changed(served, "metadata.name", "refunds")))
    for read in (read_catalog, read_catalog_rows):
        facts = read("catalog", str(tmp_path))
        assert facts.problems == ()
        count = facts.count if isinstance(facts, EncodedFacts) else len(facts.entities)
        assert count >= 3


def test_refusals_are_the_same_through_the_worker_path_and_the_whole_parse(tmp_path: Path) -> None:
    import yaml

    (tmp_path / "refused.yaml").write_text(yaml.safe_dump_all([v[1] for v in VARIANTS], sort_keys=False))
    rows: Callable[[], Any] = lambda: read_catalog_rows("catalog", str(tmp_path), parallel_min_bytes=0)  # noqa: E731
    whole = read_catalog("catalog", str(tmp_path)).problems
    assert sorted(map(str, rows().problems)) == sorted(map(str, whole))
    assert {p.field for p in whole if REFUSED in p.message} >= {v[2] for v in VARIANTS}

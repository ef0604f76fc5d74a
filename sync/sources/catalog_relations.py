"""Backstage's computed `relations`, as catalog API responses carry them beside each entity's spec.

Each is `{"type": "dependsOn", "targetRef": "component:default/cart"}` (older responses give
`target: {kind, namespace, name}` instead; https://backstage.io/docs/features/software-catalog/well-known-relations).
The spec fields say most of them already; a relation they do not state (one a catalog processor
added) is kept, cited to the entity whose response stated it. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from graph.facts import Assertion, Citation, Problem
from graph.naming.refs import RefError, format_ref, split_ref
from graph.relations import CHILD_OF, CONSUMES_API, DEPENDS_ON, MEMBER_OF, OWNED_BY, PART_OF, PROVIDES_API

# Backstage relation type -> (our relation, True when the edge runs from the target to the entity).
RELATION_TYPES: Mapping[str, tuple[str, bool]] = {
    "dependsOn": (DEPENDS_ON, False),
    "dependencyOf": (DEPENDS_ON, True),
    "ownedBy": (OWNED_BY, False),
    "ownerOf": (OWNED_BY, True),
    "partOf": (PART_OF, False),
    "hasPart": (PART_OF, True),
    "memberOf": (MEMBER_OF, False),
    "hasMember": (MEMBER_OF, True),
    "childOf": (CHILD_OF, False),
    "parentOf": (CHILD_OF, True),
    "providesApi": (PROVIDES_API, False),
    "apiProvidedBy": (PROVIDES_API, True),
    "consumesApi": (CONSUMES_API, False),
    "apiConsumedBy": (CONSUMES_API, True),
}


@dataclass(frozen=True, slots=True)
class StatedRelations:
    assertions: tuple[Assertion, ...]
    problems: tuple[Problem, ...]


def stated_relations(citation: Citation, ref: str, relations: object) -> StatedRelations:
    """The edges of one entity's `relations` list; an unreadable item is a warning naming its index."""
    where = citation.locator
    if not isinstance(relations, list):
        return StatedRelations((), (Problem(where, "expected a list: ignored", "relations"),))
    found: list[Assertion] = []
    problems: list[Problem] = []
    for index, item in enumerate(relations):
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            problems.append(Problem(where, "expected {type, targetRef}: ignored", f"relations[{index}]"))
            continue
        known = RELATION_TYPES.get(item["type"])
        if known is None:
            continue  # a relation type of a plugin: nothing we walk
        target = _target(item)
        if target is None:
            problems.append(Problem(where, "no readable targetRef: ignored", f"relations[{index}].targetRef"))
            continue
        rel, reverse = known
        src, dst = (target, ref) if reverse else (ref, target)
        found.append(Assertion(src, rel, dst, citation))
    return StatedRelations(tuple(found), tuple(problems))


def unstated_by_spec(stated: Iterable[Assertion], spec: Iterable[Assertion]) -> list[Assertion]:
    """The stated relations the spec fields do not make, each once (both ends of one state it)."""
    seen = {(a.src, a.rel, a.dst) for a in spec}
    kept = []
    for a in stated:
        key = (a.src, a.rel, a.dst)
        if key not in seen:
            seen.add(key)
            kept.append(a)
    return kept


def _target(item: Mapping[str, object]) -> str | None:
    value = item.get("targetRef", item.get("target"))
    try:
        kind, namespace, name = split_ref(value)
    except (RefError, AttributeError, TypeError):
        return None
    return format_ref(kind, namespace, name) if kind else None

"""The Backstage spec fields that hold entity references, and the edge each reference makes.

Pure: every bad reference becomes a `Problem` naming the field and index; the good ones are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graph.facts import Assertion, Citation, Problem
from graph.refs import RefError, format_ref, split_ref
from graph.relations import (
    CHILD_OF,
    CONSUMES_API,
    DEPENDS_ON,
    MEMBER_OF,
    OWNED_BY,
    PART_OF,
    PROVIDES_API,
)


@dataclass(frozen=True, slots=True)
class RefField:
    """A spec field holding references, and the edge each one makes."""

    name: str
    rel: str
    default_kind: str | None  # None: Backstage gives no default, a kindless ref is only a guess
    many: bool = False
    reverse: bool = False  # the edge runs from the target to the entity


_OWNER = RefField("owner", OWNED_BY, "group")
_SYSTEM = RefField("system", PART_OF, "system")
_DEPENDS_ON = RefField("dependsOn", DEPENDS_ON, None, many=True)
_DEPENDENCY_OF = RefField("dependencyOf", DEPENDS_ON, None, many=True, reverse=True)
# The kinds we read, each with the reference fields Backstage reads on it.
KIND_FIELDS: dict[str, tuple[RefField, ...]] = {
    "component": (
        _OWNER,
        _SYSTEM,
        RefField("subcomponentOf", PART_OF, "component"),
        RefField("providesApis", PROVIDES_API, "api", many=True),
        RefField("consumesApis", CONSUMES_API, "api", many=True),
        _DEPENDS_ON,
        _DEPENDENCY_OF,
    ),
    "resource": (_OWNER, _SYSTEM, _DEPENDS_ON, _DEPENDENCY_OF),
    "api": (_OWNER, _SYSTEM),
    "system": (_OWNER, RefField("domain", PART_OF, "domain")),
    "domain": (_OWNER, RefField("subdomainOf", PART_OF, "domain")),
    "group": (
        RefField("parent", CHILD_OF, "group"),
        RefField("children", CHILD_OF, "group", many=True, reverse=True),
        RefField("members", MEMBER_OF, "user", many=True, reverse=True),
    ),
    "user": (RefField("memberOf", MEMBER_OF, "group", many=True),),
}
_ALL_REF_FIELDS = frozenset(f.name for fields in KIND_FIELDS.values() for f in fields)


@dataclass(frozen=True, slots=True)
class RefEdges:
    """The edges of one entity's reference fields, the first target of each field, and the problems."""

    assertions: tuple[Assertion, ...]
    first_targets: Mapping[str, str]  # field name -> its first good target: the entity's owner, system
    problems: tuple[Problem, ...]


def parse_ref_edges(citation: Citation, kind: str, ref: str, namespace: str, spec: Mapping[str, object]) -> RefEdges:
    """One assertion per distinct (src, rel, dst) of the fields read on `kind`, in field order."""
    problems: list[Problem] = []
    assertions: dict[tuple[str, str, str], Assertion] = {}  # a ref listed twice is one assertion
    first_targets: dict[str, str] = {}
    for field in KIND_FIELDS[kind]:
        value = spec.get(field.name)
        if value is None:
            continue
        for target, kindless in _targets(citation.locator, field, value, namespace, problems):
            src, dst = (target, ref) if field.reverse else (ref, target)
            assertions.setdefault((src, field.rel, dst), Assertion(src, field.rel, dst, citation, kindless=kindless))
            first_targets.setdefault(field.name, target)
    return RefEdges(tuple(assertions.values()), first_targets, tuple(problems))


def unread_ref_fields(where: str, kind: str, spec: Mapping[str, object]) -> list[Problem]:
    """A warning for each reference field present that Backstage does not read on `kind`."""
    read = {field.name for field in KIND_FIELDS[kind]}
    return [
        Problem(where, f"Backstage does not read {field} on a {kind}: ignored", f"spec.{field}")
        for field in sorted(_ALL_REF_FIELDS.intersection(spec) - read)
    ]


def _targets(
    where: str, field: RefField, value: object, namespace: str, problems: list[Problem]
) -> list[tuple[str, bool]]:
    """(full ref, or `namespace/name` when kindless; kindless) for each good ref in the field."""
    if value is None:
        return []
    path = f"spec.{field.name}"
    items: list[tuple[str, object]]
    if not field.many:
        if isinstance(value, list):
            problems.append(Problem(where, "expected one reference, got a list: ignored", path, "error"))
            return []
        items = [(path, value)]
    elif isinstance(value, list):
        items = [(f"{path}[{index}]", item) for index, item in enumerate(value)]
    else:
        problems.append(Problem(where, "expected a list of references; read as a list of one", path))
        items = [(f"{path}[0]", value)]
    targets = [_target(where, field, at, item, namespace, problems) for at, item in items]
    return [target for target in targets if target is not None]


def _target(
    where: str, field: RefField, at: str, value: object, namespace: str, problems: list[Problem]
) -> tuple[str, bool] | None:
    try:
        kind, target_namespace, name = split_ref(value, default_namespace=namespace)
    except RefError as exc:
        problems.append(Problem(where, f"{exc}: ignored", at, "error"))
        return None
    if kind or field.default_kind:
        return format_ref(kind or field.default_kind or "", target_namespace, name), False
    message = (
        f"reference {value!r} had missing or empty kind, and {field.name} has no default kind: "
        f"used only if exactly one component or resource is named {target_namespace}/{name}"
    )
    problems.append(Problem(where, message, at))
    return f"{target_namespace}/{name}", True

"""The Backstage spec fields that hold entity references, and the edge each reference makes.

Pure: every bad reference becomes a `Problem` naming the field and index; the good ones are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graph.edges import new_assertion
from graph.facts import Assertion, Citation, Problem
from graph.naming.refs import RefError, format_ref, split_ref
from graph.relations import (
    CHILD_OF,
    CONSUMES_API,
    DEPENDS_ON,
    MEMBER_OF,
    OWNED_BY,
    PART_OF,
    PROVIDES_API,
)
from sync.sources.catalog_checks import REFUSED
from sync.sources.reading.shown import shown


@dataclass(frozen=True, slots=True)
class RefField:
    """A spec field holding references, and the edge each one makes."""

    name: str
    rel: str
    default_kind: str | None  # None: Backstage gives no default, a kindless ref is only a guess
    many: bool = False
    reverse: bool = False  # the edge runs from the target to the entity
    # Typed by Backstage's kind schema (text, or a list of text); dependencyOf is read by its
    # processor only, which also takes a compound ref or one ref alone.
    typed: bool = True


_OWNER = RefField("owner", OWNED_BY, "group")
_SYSTEM = RefField("system", PART_OF, "system")
_DEPENDS_ON = RefField("dependsOn", DEPENDS_ON, None, many=True)
_DEPENDENCY_OF = RefField("dependencyOf", DEPENDS_ON, None, many=True, reverse=True, typed=False)
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


# What one written reference means in one field: (target or None, kindless, problem message or "",
# severity). The same text means the same wherever it is written in that field and namespace.
_Reading = tuple[str | None, bool, str, str]
# (namespace, field name, default kind) -> text as written -> its reading. Looked up by the text
# alone, each field's memo found once per field: a 4-tuple key per reference written cost 0.6 s
# per million references (bench dense-100k).
RefReadings = dict[tuple[str, str, str | None], dict[str, _Reading]]


def parse_ref_edges(
    citation: Citation,
    kind: str,
    ref: str,
    namespace: str,
    spec: Mapping[str, object],
    readings: RefReadings | None = None,
) -> RefEdges:
    """One assertion per distinct (src, rel, dst) of the fields read on `kind`, in field order.

    `readings` remembers what each reference text meant, for the next entities of the same catalog:
    the few thousand distinct refs of a 100k-entity catalog are written 400k times (bench: 2 s).
    """
    if readings is None:
        readings = {}
    where = citation.locator
    problems: list[Problem] = []
    assertions: dict[tuple[str, str, str], Assertion] = {}  # a ref listed twice is one assertion
    first_targets: dict[str, str] = {}
    for field in KIND_FIELDS[kind]:
        value = spec.get(field.name)
        if value is None:
            if field.typed and field.name in spec:  # `owner:` with nothing after it
                problems.append(Problem(where, f"empty: {REFUSED}; ignored", f"spec.{field.name}"))
            continue
        for target, kindless in _targets(where, field, value, namespace, problems, readings):
            rel = field.rel
            if rel == CONSUMES_API and not target.startswith("api:"):
                # Backstage's own example www-artist consumes component:artist-lookup: what it means
                # is a dependency, so it stays one, and lint says where (a consumes_api edge needs an API).
                rel = DEPENDS_ON
                message = f"{target} is not an API: kept as a dependency (dependsOn is the field for it)"
                problems.append(Problem(where, message, f"spec.{field.name}"))
            src, dst = (target, ref) if field.reverse else (ref, target)
            edge = (src, rel, dst)
            if edge not in assertions:
                assertions[edge] = new_assertion(src, rel, dst, citation, False, kindless, "", False)
            if field.name not in first_targets:
                first_targets[field.name] = target
    return RefEdges(tuple(assertions.values()), first_targets, tuple(problems))


_UNREAD_FIELDS = {kind: _ALL_REF_FIELDS - {field.name for field in fields} for kind, fields in KIND_FIELDS.items()}


def unread_ref_fields(where: str, kind: str, spec: Mapping[str, object]) -> list[Problem]:
    """A warning for each reference field present that Backstage does not read on `kind`."""
    unread = _UNREAD_FIELDS[kind]
    if unread.isdisjoint(spec):
        return []  # nearly always: a quick look at the spec's few keys
    return [
        Problem(where, f"Backstage does not read {field} on a {kind}: ignored", f"spec.{field}")
        for field in sorted(unread.intersection(spec))
    ]


def _targets(
    where: str, field: RefField, value: object, namespace: str, problems: list[Problem], readings: RefReadings
) -> list[tuple[str, bool]]:
    """(full ref, or `namespace/name` when kindless; kindless) for each good ref in the field."""
    if not field.many:
        if isinstance(value, list):
            message = f"expected one reference, got a list: {REFUSED}; ignored"
            problems.append(Problem(where, message, f"spec.{field.name}", "error"))
            return []
        items = [value]
    elif isinstance(value, list):
        items = value
    else:
        refused = f": {REFUSED};" if field.typed else ";"
        message = f"expected a list of references{refused} read as a list of one"
        problems.append(Problem(where, message, f"spec.{field.name}"))
        items = [value]
    memo = readings.get(scope := (namespace, field.name, field.default_kind))
    if memo is None:
        memo = readings[scope] = {}
    targets = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            reading = memo.get(item)
            if reading is None:
                reading = memo[item] = _reading(field, item, namespace)
        else:  # a compound ref (a mapping) or junk: not worth remembering
            reading = _reading(field, item, namespace)
            if field.typed and reading[0] is not None:
                reading = (*reading[:2], _compound_message(reading[0]), "warning")
        target, kindless, message, severity = reading
        if message:
            # The place is spelled out only for a problem: 400k paths cost more than the problems.
            at = f"spec.{field.name}[{index}]" if field.many else f"spec.{field.name}"
            problems.append(Problem(where, message, at, severity))
        if target is not None:
            targets.append((target, kindless))
    return targets


def _reading(field: RefField, value: object, namespace: str) -> _Reading:
    try:
        kind, target_namespace, name = split_ref(value, default_namespace=namespace)
    except RefError as exc:
        return None, False, f"{exc}: {REFUSED}; ignored", "error"
    if kind or field.default_kind:
        return format_ref(kind or field.default_kind or "", target_namespace, name), False, "", ""
    message = (
        f"reference {shown(value)} had missing or empty kind, and {field.name} has no default kind: "
        f"used only if exactly one component or resource is named {target_namespace}/{name}"
    )
    return f"{target_namespace}/{name}", True, message, "warning"


def _compound_message(target: str) -> str:
    return f"a compound reference (a mapping) where Backstage wants text ({target!r}): {REFUSED}; read as {target}"

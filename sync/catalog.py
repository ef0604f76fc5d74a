"""Backstage service catalog: descriptor files, folders or the catalog API, read into `SourceFacts`.

`fetch_catalog_documents` does the I/O and raises when the catalog cannot be had at all;
`parse_catalog` is pure and turns every bad part into a `Problem`, keeping the rest.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

from graph.facts import AliasClaim, Assertion, Citation, Entity, Problem, SourceFacts
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
from sync.textfiles import display_name
from sync.yaml_documents import YamlDocuments, load_yaml, load_yaml_files

ALIASES_ANNOTATION = "oncall-graph/aliases"
PAGERDUTY_ANNOTATION = "pagerduty.com/service-id"
API_PATH = "/api/catalog/entities"
# Where an API entity was defined, most precise first.
_LOCATION_ANNOTATIONS = ("backstage.io/managed-by-location", "backstage.io/managed-by-origin-location")
# Backstage kinds we do not read and that every real catalog holds: not worth a warning.
_QUIET_KINDS = frozenset({"location", "template"})
_NAME = re.compile(r"[a-zA-Z0-9]+(?:[-_.][a-zA-Z0-9]+)*")
_NAMESPACE = re.compile(r"[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*")


@dataclass(frozen=True, slots=True)
class _RefField:
    """A spec field holding references, and the edge each one makes."""

    name: str
    rel: str
    default_kind: str | None  # None: Backstage gives no default, a kindless ref is only a guess
    many: bool = False
    reverse: bool = False  # the edge runs from the target to the entity


_OWNER = _RefField("owner", OWNED_BY, "group")
_SYSTEM = _RefField("system", PART_OF, "system")
_DEPENDS_ON = _RefField("dependsOn", DEPENDS_ON, None, many=True)
_DEPENDENCY_OF = _RefField("dependencyOf", DEPENDS_ON, None, many=True, reverse=True)
_FIELDS: dict[str, tuple[_RefField, ...]] = {
    "component": (
        _OWNER,
        _SYSTEM,
        _RefField("subcomponentOf", PART_OF, "component"),
        _RefField("providesApis", PROVIDES_API, "api", many=True),
        _RefField("consumesApis", CONSUMES_API, "api", many=True),
        _DEPENDS_ON,
        _DEPENDENCY_OF,
    ),
    "resource": (_OWNER, _SYSTEM, _DEPENDS_ON, _DEPENDENCY_OF),
    "api": (_OWNER, _SYSTEM),
    "system": (_OWNER, _RefField("domain", PART_OF, "domain")),
    "domain": (_OWNER, _RefField("subdomainOf", PART_OF, "domain")),
    "group": (
        _RefField("parent", CHILD_OF, "group"),
        _RefField("children", CHILD_OF, "group", many=True, reverse=True),
        _RefField("members", MEMBER_OF, "user", many=True, reverse=True),
    ),
    "user": (_RefField("memberOf", MEMBER_OF, "group", many=True),),
}
_ALL_REF_FIELDS = frozenset(f.name for fields in _FIELDS.values() for f in fields)
# Required by Backstage's schemas; a missing one is reported, the entity is still used.
_REQUIRED = {
    "component": ("type", "lifecycle"),
    "resource": ("type",),
    "api": ("type", "lifecycle"),
    "group": ("type", "children"),
    "user": ("memberOf",),
}


@dataclass(frozen=True, slots=True)
class CatalogDocuments:
    """Fetched documents as (locator, document), and what was wrong with the files."""

    documents: tuple[tuple[str, object], ...] = ()
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class _Document:
    entity: Entity | None = None
    assertions: tuple[Assertion, ...] = ()
    aliases: tuple[AliasClaim, ...] = ()
    problems: tuple[Problem, ...] = ()


def read_catalog(source: str, location: str, *, timeout: float = 30.0) -> SourceFacts:
    """Fetch and parse one catalog location; raises only when nothing could be fetched."""
    fetched = fetch_catalog_documents(location, timeout=timeout)
    facts = parse_catalog(source, fetched.documents)
    return replace(facts, problems=fetched.problems + facts.problems)


def fetch_catalog_documents(
    location: str, *, timeout: float = 30.0, headers: Mapping[str, str] | None = None
) -> CatalogDocuments:
    """Documents of a file, a folder (recursively, sorted) or a catalog API URL.

    Raises FileNotFoundError for a missing path and httpx errors when the HTTP request fails;
    a body that is not a JSON array of entities is a problem.
    """
    if urlsplit(location).scheme in ("http", "https"):
        return _fetch_url(location, timeout, headers or {})
    path = Path(location)
    if path.is_dir():
        files = _catalog_files(path)
        if not files:
            return CatalogDocuments(problems=(Problem(location, "no *.yaml or *.yml files found", "", "error"),))
        return _numbered(load_yaml_files(files))
    if path.is_file():
        return _numbered(load_yaml_files([(path, location)]))
    raise FileNotFoundError(f"catalog {location!r}: no such file or folder")


def _catalog_files(folder: Path) -> list[tuple[Path, str]]:
    # Locators are relative to the folder's parent (`catalog/payments.yaml`); hidden folders such
    # as .git and .github hold no descriptors, only YAML that is not a catalog.
    prefix = folder.resolve().name
    found: list[tuple[str, Path]] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for file in files:
            if not file.startswith(".") and file.lower().endswith((".yaml", ".yml")):
                relative = Path(root, file).relative_to(folder).as_posix()
                found.append((f"{prefix}/{relative}" if prefix else relative, Path(root, file)))
    return [(path, name) for name, path in sorted(found)]


def _numbered(files: Iterable[YamlDocuments]) -> CatalogDocuments:
    documents = tuple((f"{file.name}#{index}", doc) for file in files for index, doc in file.documents)
    return CatalogDocuments(documents, tuple(p for file in files for p in file.problems))


def catalog_api_url(location: str) -> str:
    """The URL to GET: a bare `http(s)://host` means that host's `/api/catalog/entities`."""
    parts = urlsplit(location)
    return urlunsplit(parts._replace(path=API_PATH)) if parts.path in ("", "/") else location


def parse_catalog_api(source: str, name: str, body: str) -> SourceFacts:
    """Parse a fetched body: a JSON array of entities, or YAML when `name` ends in .yaml/.yml."""
    fetched = _body_documents(name, body)
    facts = parse_catalog(source, fetched.documents)
    return replace(facts, problems=fetched.problems + facts.problems)


def _fetch_url(location: str, timeout: float, headers: Mapping[str, str]) -> CatalogDocuments:
    url = catalog_api_url(location)
    response = httpx.get(url, timeout=timeout, follow_redirects=True, headers={"Accept": "application/json", **headers})
    response.raise_for_status()
    return _body_documents(display_name(url), response.text)


def _body_documents(name: str, body: str) -> CatalogDocuments:
    if urlsplit(name).path.lower().endswith((".yaml", ".yml")):
        return _numbered([load_yaml(body, name)])
    try:
        entities = json.loads(body)
    except ValueError as exc:
        return CatalogDocuments(problems=(Problem(name, f"the catalog API answered with no JSON: {exc}", "", "error"),))
    if isinstance(entities, Mapping) and isinstance(entities.get("items"), list):
        entities = entities["items"]  # the paginated `by-query` endpoint
    if not isinstance(entities, list):
        message = f"the catalog API answered with a JSON {type(entities).__name__}, not an array of entities"
        return CatalogDocuments(problems=(Problem(name, message, "", "error"),))
    return CatalogDocuments(tuple((_api_locator(index, entity), entity) for index, entity in enumerate(entities)))


def _api_locator(index: int, entity: object) -> str:
    if not isinstance(entity, Mapping) or not isinstance(entity.get("metadata"), Mapping):
        return f"entity[{index}]"
    metadata = entity["metadata"]
    try:
        ref = format_ref(*split_ref({**metadata, "kind": entity.get("kind")}))
    except (RefError, AttributeError):
        ref = f"entity[{index}]"
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        for key in _LOCATION_ANNOTATIONS:
            if isinstance(annotations.get(key), str):
                return f"{annotations[key]}#{ref}"
    return ref


def parse_catalog(source: str, documents: Iterable[tuple[str, object]]) -> SourceFacts:
    """Entities, edges and aliases of (locator, document) pairs; the first of two same refs wins.

    Adds one consumer -> provider `depends_on` per API (`via` the API), citing each side.
    """
    entities: dict[str, Entity] = {}
    assertions: list[Assertion] = []
    aliases: list[AliasClaim] = []
    problems: list[Problem] = []
    for locator, document in documents:
        parsed = _parse_document(Citation(source, locator, origin=locator), document)
        problems.extend(parsed.problems)
        if parsed.entity is None:
            continue
        first = entities.setdefault(parsed.entity.ref, parsed.entity)
        if first is not parsed.entity:
            message = f"duplicate entity {first.ref}, first defined at {first.citation.locator}: ignored"
            problems.append(Problem(locator, message, "metadata.name"))
            continue
        assertions.extend(parsed.assertions)
        aliases.extend(parsed.aliases)
    assertions.extend(_api_edges(assertions))
    return SourceFacts(
        source, tuple(entities.values()), tuple(assertions), aliases=tuple(aliases), problems=tuple(problems)
    )


def _api_edges(assertions: Sequence[Assertion]) -> list[Assertion]:
    providers: dict[str, list[Assertion]] = defaultdict(list)
    for provides in assertions:
        if provides.rel == PROVIDES_API:
            providers[provides.dst].append(provides)
    edges: list[Assertion] = []
    for consumes in assertions:
        if consumes.rel != CONSUMES_API:
            continue
        for provides in providers.get(consumes.dst, ()):
            if provides.src != consumes.src:
                for citation in (consumes.citation, provides.citation):
                    edges.append(Assertion(consumes.src, DEPENDS_ON, provides.src, citation, via=consumes.dst))
    return edges


def _parse_document(citation: Citation, document: object) -> _Document:
    where = citation.locator
    if not isinstance(document, Mapping):
        message = f"not a mapping but {_type(document)}: skipped"
        return _Document(problems=(Problem(where, message, "", "error"),))
    kind = document.get("kind")
    if not isinstance(kind, str) or not kind:
        return _Document(problems=(Problem(where, "missing or empty kind: skipped", "kind", "error"),))
    refusal = _refusal(where, kind.lower(), document.get("apiVersion"))
    if refusal is not None:
        return _Document(problems=refusal)
    metadata = document.get("metadata")
    if not isinstance(metadata, Mapping):
        return _Document(problems=(Problem(where, "missing metadata: skipped", "metadata", "error"),))
    name, namespace = metadata.get("name"), metadata.get("namespace", "default")
    if not isinstance(name, str) or not name.strip():
        return _Document(problems=(Problem(where, "missing or empty name: skipped", "metadata.name", "error"),))
    if not isinstance(namespace, str) or not namespace.strip():
        message = f"namespace {namespace!r} is not a name: skipped"
        return _Document(problems=(Problem(where, message, "metadata.namespace", "error"),))
    spec = document.get("spec") or {}
    bad_spec: tuple[Problem, ...] = ()
    if not isinstance(spec, Mapping):
        bad_spec = (Problem(where, f"expected a mapping, got {_type(spec)}: its fields are ignored", "spec"),)
        spec = {}
    parsed = _entity_document(citation, kind.lower(), name.strip(), namespace.strip().lower(), metadata, spec)
    return replace(parsed, problems=bad_spec + parsed.problems)


def _refusal(where: str, kind: str, api_version: object) -> tuple[Problem, ...] | None:
    """None when the document is read; else the problems of skipping it (none for quiet kinds)."""
    if not isinstance(api_version, str) or not api_version.startswith("backstage.io/"):
        if kind in _FIELDS or api_version is None:
            message = f"apiVersion {api_version!r} does not start with backstage.io/: skipped"
            return (Problem(where, message, "apiVersion", "error"),)
        return (Problem(where, f"not a Backstage entity (apiVersion {api_version}): skipped", "apiVersion"),)
    if kind in _QUIET_KINDS:
        return ()
    if kind not in _FIELDS:
        return (Problem(where, f"kind {kind!r} is not read: skipped", "kind"),)
    return None


def _entity_document(
    citation: Citation,
    kind: str,
    name: str,
    namespace: str,
    metadata: Mapping[str, object],
    spec: Mapping[str, object],
) -> _Document:
    where = citation.locator
    ref = format_ref(kind, namespace, name)
    problems = _name_problems(where, name, namespace) + _shape_problems(where, kind, spec)
    annotations = _annotations(where, metadata.get("annotations"), problems)
    texts = _texts(where, metadata, spec, problems)
    assertions: dict[tuple[str, str, str], Assertion] = {}  # a ref listed twice is one assertion
    first_target: dict[str, str] = {}
    for field in _FIELDS[kind]:
        value = spec.get(field.name)
        if value is None:
            continue
        for target, kindless in _targets(where, field, value, namespace, problems):
            src, dst = (target, ref) if field.reverse else (ref, target)
            assertions.setdefault((src, field.rel, dst), Assertion(src, field.rel, dst, citation, kindless=kindless))
            first_target.setdefault(field.name, target)
    entity = Entity(
        ref,
        kind,
        name,
        citation,
        namespace=namespace,
        type=texts.get("type", ""),
        title=texts.get("title", ""),
        description=texts.get("description", ""),
        owner=first_target.get("owner", ""),
        system=first_target.get("system", ""),
        lifecycle=texts.get("lifecycle", ""),
        annotations=annotations,
    )
    claims = tuple(AliasClaim(alias, ref, citation) for alias in _aliases(texts.get("title", ""), annotations))
    return _Document(entity, tuple(assertions.values()), claims, tuple(problems))


def _name_problems(where: str, name: str, namespace: str) -> list[Problem]:
    problems = []
    if len(name) > 63 or not _NAME.fullmatch(name):
        message = f"name {name!r} breaks Backstage's rule (1-63 letters/digits in runs joined by one -, _ or .)"
        problems.append(Problem(where, message + "; used anyway", "metadata.name"))
    if len(namespace) > 63 or not _NAMESPACE.fullmatch(namespace):
        message = f"namespace {namespace!r} breaks Backstage's rule (letters/digits joined by single -)"
        problems.append(Problem(where, message + "; used anyway", "metadata.namespace"))
    return problems


def _shape_problems(where: str, kind: str, spec: Mapping[str, object]) -> list[Problem]:
    problems = []
    for field in _REQUIRED.get(kind, ()):
        if field not in spec:
            problems.append(Problem(where, f"required for a {kind}; missing", f"spec.{field}"))
    read = {field.name for field in _FIELDS[kind]}
    for field in sorted(_ALL_REF_FIELDS.intersection(spec) - read):
        problems.append(Problem(where, f"Backstage does not read {field} on a {kind}: ignored", f"spec.{field}"))
    return problems


def _texts(
    where: str, metadata: Mapping[str, object], spec: Mapping[str, object], problems: list[Problem]
) -> dict[str, str]:
    texts: dict[str, str] = {}
    fields = (("metadata", metadata, "title"), ("metadata", metadata, "description"))
    for prefix, block, key in (*fields, ("spec", spec, "type"), ("spec", spec, "lifecycle")):
        value = block.get(key)
        if isinstance(value, str):
            texts[key] = value.strip()
        elif value is not None:
            problems.append(Problem(where, f"expected text, got {_type(value)}: ignored", f"{prefix}.{key}"))
    return texts


def _annotations(where: str, value: object, problems: list[Problem]) -> Mapping[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.append(Problem(where, f"expected a mapping, got {_type(value)}: ignored", "metadata.annotations"))
        return {}
    annotations: dict[str, str] = {}
    for key, text in value.items():
        if isinstance(key, str) and isinstance(text, str):
            annotations[key] = text
        else:
            message = f"annotation values must be text, got {_type(text)}: ignored"
            problems.append(Problem(where, message, f"metadata.annotations.{key}"))
    return annotations


def _targets(
    where: str, field: _RefField, value: object, namespace: str, problems: list[Problem]
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
    where: str, field: _RefField, at: str, value: object, namespace: str, problems: list[Problem]
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


def _aliases(title: str, annotations: Mapping[str, str]) -> list[str]:
    names = [title, *annotations.get(ALIASES_ANNOTATION, "").split(","), annotations.get(PAGERDUTY_ANNOTATION, "")]
    return list(dict.fromkeys(name.strip() for name in names if name.strip()))


def _type(value: object) -> str:
    return "nothing" if value is None else f"a {type(value).__name__}"

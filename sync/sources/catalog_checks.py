"""What Backstage's catalog refuses in a descriptor that oncall-graph still reads: each a warning
naming the document and the field, saying Backstage refuses the entity and how it was read here.

The rules are those the catalog backend applies to every entity it processes, in
`@backstage/catalog-model`: the entity schema (`Entity.schema.json`, `EntityMeta.schema.json`), the
default policies (no root field but apiVersion, kind, metadata and spec; `FieldFormatEntityPolicy`'s
formats, in `sync.sources.backstage_formats`) and the kind schemas of the kinds it builds in
(`kinds/*.v1alpha1.schema.json`: the apiVersions and the exact kind each accepts, the spec fields
each requires). Reference fields are checked where they are read (`sync.sources.catalog_refs`).
Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from graph.facts import Problem
from sync.sources.backstage_formats import (
    is_non_empty_text,
    is_valid_annotation_key,
    is_valid_label_key,
    is_valid_label_value,
    is_valid_namespace,
    is_valid_object_name,
    is_valid_tag,
    is_valid_url,
)
from sync.sources.reading.shown import shown

REFUSED = "Backstage refuses this entity"
NAME_RULE = "1-63 letters, digits, -, _ or ., starting and ending with a letter or digit"
NAMESPACE_RULE = "1-63 lower-case letters and digits, runs joined by -"
_KEY_RULE = "an optional DNS-subdomain prefix and /, then a name of " + NAME_RULE
_LABEL_VALUE_RULE = "empty, or " + NAME_RULE
_TAG_RULE = "1-63 lower-case letters, digits, :, + or #, runs joined by single -"

API_VERSIONS = ("backstage.io/v1alpha1", "backstage.io/v1beta1")
# The kinds Backstage builds in, as each kind schema spells it (the `kind` enum is case-sensitive).
KIND_NAMES = {
    "component": "Component",
    "resource": "Resource",
    "api": "API",
    "system": "System",
    "domain": "Domain",
    "group": "Group",
    "user": "User",
    "location": "Location",
}
_DESCRIPTOR_FIELDS = frozenset({"apiVersion", "kind", "metadata", "spec"})
# What the catalog API adds to an entity it serves; a descriptor holding them is refused.
_RESPONSE_FIELDS = _DESCRIPTOR_FIELDS | {"relations", "status"}


@dataclass(frozen=True, slots=True)
class _Spec:
    """A kind schema's spec, reference fields aside: required fields, and the text and list fields."""

    required: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    profile: bool = False


_SPECS = {
    "component": _Spec(("type", "lifecycle", "owner"), ("type", "lifecycle")),
    "api": _Spec(("type", "lifecycle", "owner", "definition"), ("type", "lifecycle", "definition")),
    "resource": _Spec(("type", "owner"), ("type",)),
    "system": _Spec(("owner",), ("type",)),
    "domain": _Spec(("owner",), ("type",)),
    "group": _Spec(("type", "children"), ("type",), profile=True),
    "user": _Spec(("memberOf",), profile=True),
    "location": _Spec((), ("type", "target"), ("targets",)),
}
# Read as text on every kind (`Entity.type`, `Entity.lifecycle`), typed by the schema on some only.
_TEXTS_READ = ("type", "lifecycle")
_PROFILE_TEXTS = ("displayName", "email", "picture")
_PRESENCES = ("required", "optional")


def name_problems(where: str, name: object, namespace: object) -> list[Problem]:
    """`metadata.name` and `metadata.namespace` as written, against Backstage's rules."""
    problems = []
    if not is_valid_object_name(name):
        message = f"name {shown(name)} breaks Backstage's rule ({NAME_RULE}): {REFUSED}; used anyway"
        problems.append(Problem(where, message, "metadata.name"))
    if not is_valid_namespace(namespace):
        read_as = namespace.strip().lower() if isinstance(namespace, str) else namespace
        used = f"read as {shown(read_as)}" if read_as != namespace else "used anyway"
        message = f"namespace {shown(namespace)} breaks Backstage's rule ({NAMESPACE_RULE}): {REFUSED}; {used}"
        problems.append(Problem(where, message, "metadata.namespace"))
    return problems


def envelope_problems(where: str, document: Mapping[str, Any], kind: str, *, from_api: bool = False) -> list[Problem]:
    """The root fields, the apiVersion and the kind's spelling; `kind` is the lower-case kind read.

    `from_api`: the entity came from the catalog API, which adds `relations` and `status`.
    """
    problems = []
    allowed = _RESPONSE_FIELDS if from_api else _DESCRIPTOR_FIELDS
    if not allowed.issuperset(document):
        for field in sorted(str(key) for key in document if key not in allowed):
            problems.append(Problem(where, _root_field_message(field), field))
    name = KIND_NAMES[kind]
    api_version = document.get("apiVersion")
    if api_version not in API_VERSIONS:
        expected = " or ".join(API_VERSIONS)
        message = f"apiVersion {shown(api_version)} is not one Backstage reads for a {name} ({expected})"
        message += f": {REFUSED}; read anyway"
        problems.append(Problem(where, message, "apiVersion"))
    written = document.get("kind")
    if written != name:
        message = (
            f"kind {shown(written)} is not Backstage's {name!r} (kinds are case-sensitive): {REFUSED}; read as a {kind}"
        )
        problems.append(Problem(where, message, "kind"))
    return problems


def metadata_problems(where: str, metadata: Mapping[str, Any]) -> list[Problem]:
    """Title and description, labels, annotation keys, tags and links (annotation values are
    checked where they are read)."""
    problems: list[Problem] = []
    if "title" in metadata:
        _text(problems, where, "metadata.title", metadata["title"], typed=True, required_text=True)
    if "description" in metadata:
        _text(problems, where, "metadata.description", metadata["description"], typed=True, required_text=False)
    if (labels := metadata.get("labels")) is not None:
        _labels(problems, where, labels)
    if _is_mapping(annotations := metadata.get("annotations")):
        for key in annotations:
            if not _valid(is_valid_annotation_key, key):
                message = f"annotation key {shown(key)} breaks Backstage's rule ({_KEY_RULE}): {REFUSED}; read anyway"
                problems.append(Problem(where, message, f"metadata.annotations.{key}"))
    if (tags := metadata.get("tags")) is not None:
        _tags(problems, where, tags)
    if (links := metadata.get("links")) is not None:
        _links(problems, where, links)
    return problems


def spec_problems(where: str, kind: str, spec: Mapping[str, Any]) -> list[Problem]:
    """The fields the kind's schema requires, and its text and list fields (not its references)."""
    schema = _SPECS[kind]
    problems = []
    for field in schema.required:
        if field not in spec:
            message = f"required for a {KIND_NAMES[kind]}; missing: {REFUSED}; read anyway"
            problems.append(Problem(where, message, f"spec.{field}"))
    for field in _TEXTS_READ:
        if field in spec and field not in schema.texts:
            _text(problems, where, f"spec.{field}", spec[field], typed=False, required_text=False)
    for field in schema.texts:
        if field in spec:
            _text(problems, where, f"spec.{field}", spec[field], typed=True, required_text=True)
    for field in schema.lists:
        if field in spec:
            _text_list(problems, where, f"spec.{field}", spec[field])
    if kind == "location" and spec.get("presence", "required") not in _PRESENCES:
        message = f"presence {shown(spec['presence'])} is neither required nor optional: {REFUSED}"
        problems.append(Problem(where, message, "spec.presence"))
    if schema.profile and "profile" in spec:
        _profile(problems, where, spec["profile"])
    return problems


def is_placeholder(value: object) -> bool:
    """`{$text: ./openapi.yaml}` and its kin: Backstage replaces it before it checks the entity."""
    return _is_mapping(value) and len(value) == 1 and str(next(iter(value))).startswith("$")


def _root_field_message(field: str) -> str:
    if field == "relations":
        return f"relations belong to catalog API responses, not to a descriptor file: {REFUSED}; read anyway"
    if field == "status":
        return f"status belongs to catalog API responses, not to a descriptor file: {REFUSED}; ignored"
    return f"not a field of a descriptor (apiVersion, kind, metadata, spec): {REFUSED}; ignored"


def _text(problems: list[Problem], where: str, field: str, value: object, *, typed: bool, required_text: bool) -> None:
    """A text field: refused by Backstage when the schema types it and it is no text, or empty text
    where the schema wants at least one character."""
    if isinstance(value, str):
        if required_text and not value:
            problems.append(Problem(where, f"empty: {REFUSED}; ignored", field))
        return
    if is_placeholder(value):
        return
    refused = f"{REFUSED}; ignored" if typed else "ignored"
    problems.append(Problem(where, f"expected text, got {_type(value)}: {refused}", field))


def _text_list(problems: list[Problem], where: str, field: str, value: object) -> None:
    if _said_unless_list(value, problems, where, field):
        for index, item in enumerate(value):
            if not (isinstance(item, str) and item) and not is_placeholder(item):
                _refuse(problems, where, f"{field}[{index}]", f"expected non-empty text, got {shown(item)}")


def _labels(problems: list[Problem], where: str, labels: object) -> None:
    if _said_unless_mapping(labels, problems, where, "metadata.labels"):
        for key, value in labels.items():
            field = f"metadata.labels.{key}"
            if not _valid(is_valid_label_key, key):
                _refuse(problems, where, field, f"label key {shown(key)} breaks Backstage's rule ({_KEY_RULE})")
            if not _valid(is_valid_label_value, value):
                rule = _LABEL_VALUE_RULE
                _refuse(problems, where, field, f"label value {shown(value)} breaks Backstage's rule ({rule})")


def _tags(problems: list[Problem], where: str, tags: object) -> None:
    if _said_unless_list(tags, problems, where, "metadata.tags"):
        for index, tag in enumerate(tags):
            if not _valid(is_valid_tag, tag):
                said = f"tag {shown(tag)} breaks Backstage's rule ({_TAG_RULE})"
                _refuse(problems, where, f"metadata.tags[{index}]", said)


def _links(problems: list[Problem], where: str, links: object) -> None:
    if not _said_unless_list(links, problems, where, "metadata.links"):
        return
    for index, link in enumerate(links):
        at = f"metadata.links[{index}]"
        if not _said_unless_mapping(link, problems, where, at):
            continue
        if not is_valid_url(link.get("url")):
            _refuse(problems, where, f"{at}.url", f"url {shown(link.get('url'))} is not an absolute URL")
        for key in ("title", "icon", "type"):
            if key in link and not is_non_empty_text(link[key]):
                _refuse(problems, where, f"{at}.{key}", f"expected non-empty text, got {shown(link[key])}")


def _profile(problems: list[Problem], where: str, profile: object) -> None:
    if _said_unless_mapping(profile, problems, where, "spec.profile"):
        for key in _PROFILE_TEXTS:
            if key in profile:
                _text(problems, where, f"spec.profile.{key}", profile[key], typed=True, required_text=True)


def _said_unless_list(value: object, problems: list[Problem], where: str, field: str) -> TypeGuard[list[Any]]:
    if isinstance(value, list):
        return True
    _refuse(problems, where, field, f"expected a list, got {_type(value)}")
    return False


def _said_unless_mapping(
    value: object, problems: list[Problem], where: str, field: str
) -> TypeGuard[Mapping[Any, Any]]:
    if _is_mapping(value):
        return True
    _refuse(problems, where, field, f"expected a mapping, got {_type(value)}")
    return False


def _refuse(problems: list[Problem], where: str, field: str, said: str) -> None:
    problems.append(Problem(where, f"{said}: {REFUSED}", field))


# Keys, label values and tags repeat across a catalog's entities: each checked once per process.
_VALIDITY: dict[tuple[Callable[[object], bool], object], bool] = {}


def _valid(check: Callable[[object], bool], value: object) -> bool:
    if not isinstance(value, str):
        return check(value)
    found = _VALIDITY.get((check, value))
    if found is None:
        if len(_VALIDITY) > 100_000:
            _VALIDITY.clear()  # a memo, not a store: a catalog of unique keys must not grow it for ever
        found = _VALIDITY[(check, value)] = check(value)
    return found


def _is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    return type(value) is dict or isinstance(value, Mapping)


def _type(value: object) -> str:
    return "nothing" if value is None else f"a {type(value).__name__}"

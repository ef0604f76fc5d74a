"""Triples: a JSON array of `{subject, relation, object, source_text}` (optional `source` id),
as written by people or extracted by a model, read into by-name `Assertion`s."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

import httpx

from graph.facts import Assertion, Citation, Problem, SourceFacts
from graph.relations import (
    CHILD_OF,
    CONSUMES_API,
    DEPENDS_ON,
    MEMBER_OF,
    OWNED_BY,
    PART_OF,
    PROVIDES_API,
    TEXT_DEPENDENCIES,
)
from sync.sources.reading.shown import shown
from sync.sources.reading.textfiles import DEFAULT_TIMEOUT, FetchedText, fetch_text

REQUIRED = ("subject", "relation", "object", "source_text")

KNOWN = frozenset({DEPENDS_ON, OWNED_BY, PART_OF, MEMBER_OF, CHILD_OF, CONSUMES_API, PROVIDES_API})
KNOWN |= TEXT_DEPENDENCIES

# Other spellings of a known relation, after normalising and dropping a leading "is_".
SYNONYMS = {
    "depend_on": DEPENDS_ON,
    "relies_on": DEPENDS_ON,
    "rely_on": DEPENDS_ON,
    "requires": DEPENDS_ON,
    "require": DEPENDS_ON,
    "run_on": "runs_on",
    "call": "calls",
    "use": "uses",
    "read_from": "reads_from",
    "write_to": "writes_to",
    "publish_to": "publishes_to",
    "belongs_to": PART_OF,
    "consumes": CONSUMES_API,
    "provides": PROVIDES_API,
}

# "X owns Y" is said from the other end: it becomes "Y owned_by X".
REVERSED = {
    "owns": OWNED_BY,
    "own": OWNED_BY,
    "owner_of": OWNED_BY,
    "dependency_of": DEPENDS_ON,
    "has_part": PART_OF,
    "has_member": MEMBER_OF,
    "parent_of": CHILD_OF,
}

_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")


def fetch_triples(
    location: str, *, timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None
) -> FetchedText:
    return fetch_text(location, timeout=timeout, accept="application/json", transport=transport)


def read_triples(
    source: str,
    path: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
) -> SourceFacts:
    """Fetch and parse one triples file (or URL); raises FetchError only when nothing could be read."""
    fetched = fetch_triples(path, timeout=timeout, transport=transport)
    return parse_triples(source, fetched.name, fetched.text)


def parse_triples(source: str, name: str, text: str) -> SourceFacts:
    """One extracted, by-name Assertion per good element; each bad element or field a Problem."""
    try:
        data = json.loads(text.removeprefix("\ufeff"))
    except (ValueError, RecursionError) as exc:
        return SourceFacts(source, problems=(_syntax_problem(name, exc),))
    if not isinstance(data, list):
        message = f"expected a JSON array of {{subject, relation, object, source_text}}, got {_kind(data)}"
        return SourceFacts(source, problems=(Problem(name, message, severity="error"),))
    assertions: list[Assertion] = []
    problems: list[Problem] = []
    for index, item in enumerate(data, 1):
        assertion = _parse_item(source, f"{name}#{index}", item, problems)
        if assertion is not None:
            assertions.append(assertion)
    return SourceFacts(source, assertions=tuple(assertions), problems=tuple(problems))


def normalize_relation(relation: str) -> tuple[str, bool]:
    """(canonical relation name, True when subject and object must swap): `owns` -> (owned_by, True)."""
    # camelCase first (dependsOn), then case, spaces and dashes
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", relation.strip())
    name = re.sub(r"[\s\-_]+", "_", name.lower()).strip("_")
    for candidate in (name, name.removeprefix("is_")):
        if candidate in KNOWN:
            return candidate, False
        if candidate in SYNONYMS:
            return SYNONYMS[candidate], False
        if candidate in REVERSED:
            return REVERSED[candidate], True
    return name, False


def _parse_item(source: str, where: str, item: object, problems: list[Problem]) -> Assertion | None:
    if not isinstance(item, dict):
        message = f"expected an object with {', '.join(REQUIRED)}, got {_kind(item)}"
        problems.append(Problem(where, message, severity="error"))
        return None
    values = {key: _required_text(where, item, key, problems) for key in REQUIRED}
    citation_id = _citation_id(where, item, problems)
    if not all(values.values()):
        return None
    rel, swap = normalize_relation(values["relation"])
    if not _IDENTIFIER.fullmatch(rel):
        message = f"relation {shown(values['relation'])} is not a relation name"
        problems.append(Problem(where, message, field="relation", severity="error"))
        return None
    if rel not in KNOWN:
        message = f"unknown relation {shown(rel)}: kept, but it never propagates failure"
        problems.append(Problem(where, message, field="relation"))
    if values["subject"].casefold() == values["object"].casefold():
        message = f"subject and object are both {shown(values['subject'])}; an entity cannot relate to itself"
        problems.append(Problem(where, message, field="object", severity="error"))
        return None
    src, dst = (values["object"], values["subject"]) if swap else (values["subject"], values["object"])
    citation = Citation(source, citation_id, origin=citation_id, text=values["source_text"], extracted=True)
    return Assertion(src, rel, dst, citation, by_name=True)


def _required_text(where: str, item: Mapping[str, object], key: str, problems: list[Problem]) -> str:
    value = item.get(key)
    if isinstance(value, str) and value.strip():
        return value.strip()
    message = "missing" if value is None else "empty" if isinstance(value, str) else _not_text(value)
    problems.append(Problem(where, message, field=key, severity="error"))
    return ""


def _citation_id(where: str, item: Mapping[str, object], problems: list[Problem]) -> str:
    value = item.get("source")
    if value is None:
        return where
    if isinstance(value, str) and value.strip():
        return value.strip()
    message = f"{'empty' if isinstance(value, str) else _not_text(value)}; cited as {where} instead"
    problems.append(Problem(where, message, field="source"))
    return where


def _syntax_problem(name: str, exc: Exception) -> Problem:
    if isinstance(exc, json.JSONDecodeError):
        message = f"not valid JSON: {exc.msg} (column {exc.colno})"
        return Problem(f"{name}:{exc.lineno}", message, severity="error")
    reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
    return Problem(name, f"not valid JSON: {reason}", severity="error")


def _not_text(value: object) -> str:
    return f"expected a string, got {_kind(value)}"


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")

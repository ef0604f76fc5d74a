"""The one tool a model may call to report relations, and the strict check of what it returned.

The tool's JSON schema is the output contract: a list of `{src, rel, dst, evidence}` with `rel` one
of `graph.review.EXTRACTABLE` (never `owned_by`). The model's output is checked again here, item by
item, because a schema sent to a model is a request, not a guarantee: an item is kept only when every
field is present and a non-empty string, `rel` is allowed, the evidence is quoted from the chunk and
both names appear in the chunk. Everything else is dropped with its reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graph.review import EXTRACTABLE, plain_name
from sync.extract.chunks import Chunk

TOOL_NAME = "record_relations"
FIELDS = ("src", "rel", "dst", "evidence")
MAX_NAME_CHARS = 200
MAX_EVIDENCE_CHARS = 1_000
MAX_ITEMS = 200

_NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS}
RELATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "relations": {
            "type": "array",
            "maxItems": MAX_ITEMS,
            "items": {
                "type": "object",
                "properties": {
                    "src": {**_NAME, "description": "the component or resource that needs the other, as written"},
                    "rel": {"type": "string", "enum": list(EXTRACTABLE)},
                    "dst": {**_NAME, "description": "what src needs, as written"},
                    "evidence": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_EVIDENCE_CHARS,
                        "description": "the sentence that states the relation, copied word for word",
                    },
                },
                "required": list(FIELDS),
                "additionalProperties": False,
            },
        }
    },
    "required": ["relations"],
    "additionalProperties": False,
}
TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": (
        "Record every dependency between services, datastores, queues and APIs that the document states "
        "outright. Call it exactly once, with an empty list when the document states none."
    ),
    "input_schema": RELATION_SCHEMA,
}
TOOL_CHOICE: dict[str, Any] = {"type": "tool", "name": TOOL_NAME}


@dataclass(frozen=True, slots=True)
class Candidate:
    """An item that passed every check, with the document line its evidence starts on."""

    src: str
    rel: str
    dst: str
    evidence: str
    line: int


@dataclass(frozen=True)
class Checked:
    kept: tuple[Candidate, ...]
    dropped: Counter[str] = field(default_factory=Counter)  # reason -> count


def check_relations(tool_input: object, chunk: Chunk) -> Checked:
    """The items of one tool call that are schema-valid and grounded in `chunk`; the rest counted by reason."""
    if not isinstance(tool_input, Mapping) or not isinstance(tool_input.get("relations"), list):
        return Checked((), Counter({"reply is not {relations: [...]}": 1}))
    kept: dict[tuple[str, str, str], Candidate] = {}
    dropped: Counter[str] = Counter()
    for item in tool_input["relations"][:MAX_ITEMS]:
        candidate, reason = _check_item(item, chunk)
        if candidate is None:
            dropped[reason] += 1
        else:
            kept.setdefault((candidate.src.lower(), candidate.rel, candidate.dst.lower()), candidate)
    extra = len(tool_input["relations"]) - MAX_ITEMS
    if extra > 0:
        dropped[f"more than {MAX_ITEMS} items"] += extra
    return Checked(tuple(kept.values()), dropped)


def _check_item(item: object, chunk: Chunk) -> tuple[Candidate | None, str]:
    if not isinstance(item, Mapping):
        return None, "item is not an object"
    for name in FIELDS:
        value = item.get(name)
        if not isinstance(value, str) or not value.strip():
            return None, f"missing field {name}"
    if unknown := sorted(set(item) - set(FIELDS)):
        return None, f"unknown field {unknown[0]}"
    src, rel, dst, evidence = (" ".join(str(item[name]).split()) for name in FIELDS)
    if rel not in EXTRACTABLE:
        return None, f"relation {rel[:40]!r} is not allowed"
    if max(len(src), len(dst)) > MAX_NAME_CHARS or len(evidence) > MAX_EVIDENCE_CHARS:
        return None, "field too long"
    if plain_name(src) == plain_name(dst):
        return None, "src and dst are the same"
    at = chunk.flat_text().find(evidence)
    if at < 0:
        return None, "evidence is not quoted from the chunk"
    for side, name in (("src", src), ("dst", dst)):
        if not mentions(chunk.flat_text(), name):
            return None, f"{side} is not mentioned in the chunk"
    return Candidate(src, rel, dst, evidence, chunk.line_of(at)), ""


def mentions(text: str, name: str) -> bool:
    key = plain_name(name)
    return bool(key) and f" {key} " in f" {plain_name(text)} "

"""Facts to JSON-ready rows and back, so the store can persist exactly what readers produced.

Each row has a stable key (a hash of its content): a re-sync that produces the same fact
produces the same key, which is how the store tells unchanged facts from added and dropped ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from typing import Any

import orjson

from graph.background import stepping
from graph.facts import AliasClaim, Assertion, Citation, Deploy, Entity, Observation, Passage, Problem, SourceFacts

ENTITY, ASSERTION, DEPLOY, ALIAS, PROBLEM = "entity", "assertion", "deploy", "alias", "problem"
PASSAGE, OBSERVATION = "passage", "observation"


Row = tuple[str, str, str]  # (kind, key, payload): a fact as stored


@dataclass(frozen=True, slots=True)
class FactRow:
    kind: str
    key: str
    payload: str


def _citation(c: Citation) -> list[Any]:
    values = [c.source, c.locator, c.origin, c.text, c.extracted, c.evidence, c.url]
    while len(values) > 2 and not values[-1]:
        values.pop()  # trailing defaults are implied
    return values


def _spec(cls: type[Any]) -> tuple[tuple[str, Any, Callable[[Any], Any] | None], ...]:
    """(field, default, conversion to a JSON value) per field; a field without a default is always written."""
    spec = []
    for f in fields(cls):
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = _REQUIRED
        spec.append((f.name, default, _CONVERSIONS.get(f.name)))
    return tuple(spec)


_REQUIRED = object()
# Decided per field once, not per value: isinstance checks on every field of 600k facts cost seconds.
_CONVERSIONS: dict[str, Callable[[Any], Any]] = {
    "citation": _citation,
    "deployed_at": datetime.isoformat,
    "annotations": dict,
}
_CLASSES: dict[str, type[Any]] = {
    ENTITY: Entity,
    ASSERTION: Assertion,
    DEPLOY: Deploy,
    ALIAS: AliasClaim,
    PROBLEM: Problem,
    PASSAGE: Passage,
    OBSERVATION: Observation,
}
_SPECS = {cls: _spec(cls) for cls in _CLASSES.values()}


def _compile_payload(cls: type[Any]) -> Callable[[Any, list[Any]], dict[str, Any]]:
    """A payload function written out for one fact class, the way `dataclasses` writes __init__.

    A generic loop over the fields (getattr, compare, convert) cost 6 µs a fact, four seconds of
    a 100k-entity cold sync; the written-out function does the same work in a fraction of that.
    Its second argument, `[citation, its JSON value]`, remembers the last citation converted.
    """
    namespace: dict[str, Any] = {}
    lines = ["def payload(fact, cited):", "    out = {}"]
    for index, (name, default, convert) in enumerate(_SPECS[cls]):
        value = f"convert_{index}(fact.{name})" if convert else f"fact.{name}"
        namespace[f"convert_{index}"], namespace[f"default_{index}"] = convert, default
        if convert is _citation and default is _REQUIRED:
            # A catalog document's entity and edges share one Citation object, encoded in a row:
            # converting it once instead of per fact saved a second at 600k facts.
            lines.append(f"    if fact.{name} is not cited[0]:")
            lines.append(f"        cited[0], cited[1] = fact.{name}, {value}")
            lines.append(f"    out[{name!r}] = cited[1]")
        elif default is _REQUIRED:
            lines.append(f"    out[{name!r}] = {value}")
        else:
            lines.append(f"    if fact.{name} != default_{index}:")
            lines.append(f"        out[{name!r}] = {value}")
    lines.append("    return out")
    exec("\n".join(lines), namespace)  # generated from our own dataclass fields only
    payload: Callable[[Any, list[Any]], dict[str, Any]] = namespace["payload"]
    return payload


_PAYLOADS = {cls: _compile_payload(cls) for cls in _CLASSES.values()}


def _payload(fact: Any) -> dict[str, Any]:
    """The fact's fields as JSON values, defaults left out: a third of the bytes to store and parse."""
    return _PAYLOADS[type(fact)](fact, [None, None])


def _row(kind: str, payload: Mapping[str, Any]) -> FactRow:
    return FactRow(*_encoded(kind, _seed(kind), payload))


def _encoded(kind: str, seed: Any, payload: Mapping[str, Any]) -> Row:
    """(kind, key, JSON text) of a payload; `seed` is `_seed(kind)`."""
    # orjson writes exactly what json.dumps(sort_keys, ensure_ascii=False, compact) writes (a test
    # keeps it so: the keys of facts stored by older versions must not change), ~10x faster.
    data = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    digest = seed.copy()
    digest.update(data)
    return kind, digest.hexdigest(), data.decode()


_SEEDS: dict[str, Any] = {}


def _seed(kind: str) -> Any:
    """The key's hash with the kind's name and a NUL byte fed in: copied per row, a third cheaper
    than hashing each row's bytes from the start (600k rows: 0.15 s)."""
    seed = _SEEDS.get(kind)
    if seed is None:
        seed = _SEEDS[kind] = hashlib.blake2b(kind.encode() + b"\0", digest_size=16)
    return seed


class RowWriter:
    """Encodes facts one kind at a time into rows, as `encode_facts` does.

    One writer per batch of facts that share citations (a catalog file): it converts each run of
    facts citing one document only once.
    """

    def __init__(self) -> None:
        self._cited: list[Any] = [None, None]

    def rows(self, kind: str, facts: Iterable[Any]) -> list[Row]:
        seed, cited = _seed(kind), self._cited
        return [_encoded(kind, seed, _PAYLOADS[type(fact)](fact, cited)) for fact in facts]


@dataclass(frozen=True, slots=True)
class EncodedFacts:
    """A source's facts already encoded, in place of its `SourceFacts`: a reader that encodes in
    worker processes (a big catalog) hands the store these and never builds the fact objects here.
    """

    source: str
    rows: Sequence[Row]  # as `encode_rows` gives them
    count: int  # facts, problems aside
    problems: tuple[Problem, ...]


def encode_facts(facts: SourceFacts) -> Iterator[FactRow]:
    """One row per fact; identical facts give identical keys."""
    return (FactRow(*row) for row in encode_rows(facts))


def encode_rows(facts: SourceFacts | EncodedFacts) -> Sequence[Row]:
    """One (kind, key, payload) per fact: what the store diffs and inserts.

    Plain tuples, not `FactRow`s: at 600k facts every object built per row costs a few tenths of a second.
    """
    if isinstance(facts, EncodedFacts):
        return facts.rows
    writer = RowWriter()
    return [row for kind, group in _groups(facts) for row in writer.rows(kind, group)]


def _groups(facts: SourceFacts) -> tuple[tuple[str, Sequence[Any]], ...]:
    return (
        (ENTITY, facts.entities),
        (ASSERTION, facts.assertions),
        (DEPLOY, facts.deploys),
        (ALIAS, facts.aliases),
        (PROBLEM, facts.problems),
        (PASSAGE, facts.passages),
        (OBSERVATION, facts.observations),
    )


def decode_facts(source: str, rows: Iterable[tuple[str, str]]) -> SourceFacts:
    """Rebuild a source's facts from (kind, payload) rows."""
    decoder = FactDecoder(source)
    decoder.add(rows)
    return decoder.facts()


class FactDecoder:
    """Rebuilds one source's facts from (kind, payload) rows, given in as many batches as they come."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._decoded: dict[str, list[Any]] = {kind: [] for kind in _CLASSES}
        # A catalog document's entity and edges share one citation: build it once, keep one object.
        self._citations: dict[tuple[Any, ...], Citation] = {}

    def add(self, rows: Iterable[tuple[str, str]]) -> None:
        by_kind = {kind: (self._decoded[kind].append, _DECODERS[kind]) for kind in _CLASSES}
        citations, loads = self._citations, orjson.loads
        for kind, payload in stepping(rows):
            append, decode = by_kind[kind]
            append(decode(loads(payload), citations))

    def facts(self) -> SourceFacts:
        decoded = self._decoded
        return SourceFacts(
            self.source,
            tuple(decoded[ENTITY]),
            tuple(decoded[ASSERTION]),
            tuple(decoded[DEPLOY]),
            tuple(decoded[ALIAS]),
            tuple(decoded[PROBLEM]),
            tuple(decoded[PASSAGE]),
            tuple(decoded[OBSERVATION]),
        )


# How a stored JSON value becomes the field's value again (the reverse of _CONVERSIONS).
_REVERSIONS: dict[str, Callable[[Any], Any]] = {
    "deployed_at": datetime.fromisoformat,
    "headings": tuple,
}


def _compile_decoder(cls: type[Any]) -> Callable[[dict[str, Any], dict[tuple[Any, ...], Citation]], Any]:
    """A function written out for one fact class that builds a fact from its payload dict.

    It fills the slots directly, as pickle does, instead of calling the frozen dataclass's
    __init__: that sets each field through object.__setattr__ and, with the `**payload` call,
    cost half of decoding 600k facts (bench: 2 s of a 100k-entity restart). The facts have no
    __post_init__ to skip; a test keeps every decoded fact equal to the one that was encoded.
    """
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__ the decoder would skip")
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls, "Citation": Citation}
    lines = ["def decode(d, citations):", "    fact = new(cls)"]
    for index, f in enumerate(fields(cls)):
        name, setter = f.name, f"set_{index}"
        namespace[setter] = getattr(cls, name).__set__  # the slot's own descriptor
        if name == "citation":  # always written; one object per distinct citation
            lines += [
                "    v = d['citation']",
                "    key = tuple(v)",
                "    c = citations.get(key)",
                "    if c is None:",
                "        c = citations[key] = Citation(*v)",
                f"    {setter}(fact, c)",
            ]
            continue
        value = f"d[{name!r}]"
        if name in _REVERSIONS:
            namespace[f"revert_{index}"] = _REVERSIONS[name]
            value = f"revert_{index}({value})"
        if f.default is not MISSING:
            namespace[f"default_{index}"] = f.default
            value = f"{value} if {name!r} in d else default_{index}"
        elif f.default_factory is not MISSING:
            namespace[f"factory_{index}"] = f.default_factory
            value = f"{value} if {name!r} in d else factory_{index}()"
        lines.append(f"    {setter}(fact, {value})")
    lines.append("    return fact")
    exec("\n".join(lines), namespace)  # generated from our own dataclass fields only
    decode: Callable[[dict[str, Any], dict[tuple[Any, ...], Citation]], Any] = namespace["decode"]
    return decode


_DECODERS = {kind: _compile_decoder(cls) for kind, cls in _CLASSES.items()}

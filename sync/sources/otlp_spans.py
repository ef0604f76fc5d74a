"""OTLP/JSON trace documents as the few span facts a service graph needs.

Both encodings real tools write are read: the specification's (hex ids, integer enums) and
gogo-protobuf's (base64 ids, enum names such as `SPAN_KIND_CLIENT`, which Tempo's fixtures and
older exporters use). A document may be wrapped as Jaeger's API v3 answers (`{"result": …}`) or
as Tempo's trace API does (`{"batches": […]}`). Attributes are kept only where they name the other
side of a call; INTERNAL spans and spans of unspecified kind are dropped at once.

What an unpaired CLIENT or PRODUCER span names follows Tempo's service-graph processor: a database
call (any `db.*` name attribute) names its server by `service.peer.name`/`peer.service`, then
`server.address`, then `network.peer.address[:network.peer.port]`, then the database attribute
itself; any other call only by `service.peer.name`/`peer.service` (an HTTP call to a log shipper
names nothing); a producer, else, by its messaging system.
"""

from __future__ import annotations

import base64
import binascii
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from graph.facts import Problem
from graph.observed import DATABASE, MESSAGING, VIRTUAL_NODE
from sync.sources.reading.shown import shown

# SpanKind (opentelemetry-proto trace.proto): 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
SERVER, CLIENT, PRODUCER, CONSUMER = 2, 3, 4, 5
_KINDS = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
STATUS_ERROR = 2

PEER = ("service.peer.name", "peer.service")  # the current semantic conventions' name first
DATABASE_NAMES = ("db.namespace", "db.name", "db.system", "db.system.name")  # Tempo's order for the fallback
ADDRESS, PEER_ADDRESS, PEER_PORT = "server.address", "network.peer.address", "network.peer.port"
MESSAGING_SYSTEM = "messaging.system"
DESTINATION = ("messaging.destination.name", "messaging.destination")
SERVICE_NAME = "service.name"
_WANTED = frozenset((*PEER, *DATABASE_NAMES, ADDRESS, PEER_ADDRESS, PEER_PORT, MESSAGING_SYSTEM, *DESTINATION))
_RESOURCE_WANTED = frozenset({SERVICE_NAME})

_HEX = re.compile(r"[0-9a-fA-F]+")
TRACE_BYTES, SPAN_BYTES = 16, 8

Locate = Callable[[object], str]  # a span's raw `spanId` (None for none) -> `file:line`


@dataclass(frozen=True, slots=True)
class Span:
    """One CLIENT, SERVER, PRODUCER or CONSUMER span, as much of it as pairing needs.

    `names` is the other side the span's own attributes name (for a client: its server when no
    server span pairs with it; for a root server: its caller), with that edge's `connection`.
    """

    trace: str  # lower-case hex
    span: str
    parent: str  # "" for a root span
    kind: int
    service: str
    start_ns: int
    failed: bool
    where: str  # `file:line` of the document or JSON Lines record holding it
    names: str = ""
    connection: str = ""
    broker: str = ""  # `system/destination` of a producer or consumer
    database: bool = False

    @property
    def calls_out(self) -> bool:
        return self.kind in (CLIENT, PRODUCER)

    @property
    def messaging(self) -> bool:
        return self.kind in (PRODUCER, CONSUMER)


@dataclass(slots=True)
class Skipped:
    """Spans read but of no use, counted for the source's notes."""

    no_service: int = 0  # in a resource without `service.name`


def resource_spans(document: object) -> tuple[list[object], str] | None:
    """The document's `resourceSpans` and the path they were found at; None when it holds none."""
    if not isinstance(document, dict):
        return None
    for key, path in (("resourceSpans", "resourceSpans"), ("batches", "batches")):
        found = document.get(key)
        if isinstance(found, list):
            return found, path
    inner = document.get("result")
    if isinstance(inner, dict):
        found = resource_spans(inner)
        return (found[0], f"result.{found[1]}") if found else None
    return None


def spans_of(
    batches: list[object], path: str, locate: Locate, problems: list[Problem], skipped: Skipped
) -> Iterator[Span]:
    """Every span of a call in `batches` (the `resourceSpans` at `path`); each bad one a problem.

    `locate` gives the `file:line` of a span from its raw `spanId` (of the document for a batch).
    """
    where = locate(None)
    for r, batch in enumerate(batches):
        if not isinstance(batch, dict):
            problems.append(Problem(where, "expected an object", f"{path}[{r}]", "error"))
            continue
        resource = batch.get("resource")
        attributes = resource.get("attributes") if isinstance(resource, dict) else None
        service = _attributes(attributes, _RESOURCE_WANTED).get(SERVICE_NAME)
        for scope_path, scope in _scopes(batch, f"{path}[{r}]"):
            spans = scope.get("spans") if isinstance(scope, dict) else None
            for s, raw in enumerate(spans if isinstance(spans, list) else ()):
                span = _span(raw, service, f"{scope_path}.spans[{s}]", locate, problems, skipped)
                if span is not None:
                    yield span


def _scopes(batch: Mapping[str, object], path: str) -> Iterator[tuple[str, object]]:
    # `instrumentationLibrarySpans`: the name before OTLP 0.15, still in old exports and Jaeger's.
    for key in ("scopeSpans", "instrumentationLibrarySpans"):
        found = batch.get(key)
        if isinstance(found, list):
            for index, scope in enumerate(found):
                yield f"{path}.{key}[{index}]", scope


def _span(
    raw: object, service: str | None, path: str, locate: Locate, problems: list[Problem], skipped: Skipped
) -> Span | None:
    if not isinstance(raw, dict):
        problems.append(Problem(locate(None), "expected an object", path, "error"))
        return None
    where = locate(raw.get("spanId"))
    kind = _kind(raw.get("kind"))
    if kind is None:
        problems.append(Problem(where, f"not a span kind: {shown(raw.get('kind'))}; span skipped", f"{path}.kind"))
        return None
    if kind not in (SERVER, CLIENT, PRODUCER, CONSUMER):
        return None  # internal work, not a call between services
    if not service:
        skipped.no_service += 1
        return None
    ids = {}
    for field, size in (("traceId", TRACE_BYTES), ("spanId", SPAN_BYTES), ("parentSpanId", SPAN_BYTES)):
        value, message = _id(raw.get(field), size, root_allowed=field == "parentSpanId")
        if message:
            problems.append(Problem(where, f"{message}; span skipped", f"{path}.{field}", "error"))
            return None
        ids[field] = value
    start = _nanos(raw.get("startTimeUnixNano")) or _nanos(raw.get("endTimeUnixNano"))
    if start is None:
        message = f"missing or not a time: {shown(raw.get('startTimeUnixNano'))}; a call is counted by its time"
        problems.append(Problem(where, f"{message}; span skipped", f"{path}.startTimeUnixNano", "error"))
        return None
    parent = ids["parentSpanId"]
    attributes = _attributes(raw.get("attributes"), _WANTED)
    status = raw.get("status")
    return Span(
        sys.intern(ids["traceId"]),
        ids["spanId"],
        parent,
        kind,
        sys.intern(service),
        start,
        _failed(status.get("code") if isinstance(status, dict) else None),
        where,
        *_named(kind, parent, attributes),
    )


def _named(kind: int, parent: str, attributes: Mapping[str, str]) -> tuple[str, str, str, bool]:
    """(names, connection, broker, database) of a span, from its attributes."""
    broker = _broker(attributes) if kind in (PRODUCER, CONSUMER) else ""
    peer = _first(attributes, PEER)
    if kind in (SERVER, CONSUMER):
        # Only a root server span can name its caller: any other has one, in the trace or not.
        caller = peer if not parent else ""
        return caller, MESSAGING if kind == CONSUMER else VIRTUAL_NODE, broker, False
    database = _first(attributes, DATABASE_NAMES)
    if database:
        return _database_server(attributes, peer, database), DATABASE, broker, True
    if peer:
        return peer, VIRTUAL_NODE, broker, False
    if kind == PRODUCER and attributes.get(MESSAGING_SYSTEM):
        return attributes[MESSAGING_SYSTEM], VIRTUAL_NODE, broker, False
    return "", "", broker, False


def _database_server(attributes: Mapping[str, str], peer: str, database: str) -> str:
    if peer or (peer := attributes.get(ADDRESS, "")):
        return peer
    host = attributes.get(PEER_ADDRESS, "")
    if host:
        port = attributes.get(PEER_PORT, "")
        return f"{host}:{port}" if port else host
    return database


def _broker(attributes: Mapping[str, str]) -> str:
    system = attributes.get(MESSAGING_SYSTEM, "")
    destination = _first(attributes, DESTINATION)
    return f"{system}/{destination}" if system and destination else system


def _first(attributes: Mapping[str, str], keys: tuple[str, ...]) -> str:
    return next((attributes[key] for key in keys if attributes.get(key)), "")


def _attributes(raw: object, wanted: frozenset[str]) -> dict[str, str]:
    """The `wanted` attributes, as text; any other key, and any array or map value, is ignored."""
    found: dict[str, str] = {}
    if not isinstance(raw, list):
        return found
    for item in raw:
        if isinstance(item, dict) and (key := item.get("key")) in wanted:
            text = _text(item.get("value"))
            if text:
                found[str(key)] = text
    return found


def _text(value: object) -> str:
    """An AnyValue (`{"stringValue": …}`, `{"intValue": "5432"}`, …) or a bare scalar, as text."""
    if isinstance(value, dict):
        for key in ("stringValue", "intValue", "doubleValue", "boolValue"):
            if key in value:
                return _text(value[key])
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value).strip()
    return ""


def _kind(raw: object) -> int | None:
    """2 or `"SPAN_KIND_SERVER"` (or `"server"`); None when it is neither; 0 when absent."""
    if raw is None:
        return 0
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw if 0 <= raw <= CONSUMER else None
    if isinstance(raw, str):
        name = raw.strip().upper().removeprefix("SPAN_KIND_")
        if name.isdigit():
            return _kind(int(name))
        return _KINDS.get(name)
    return None


def _failed(code: object) -> bool:
    if isinstance(code, int) and not isinstance(code, bool):
        return code == STATUS_ERROR
    return isinstance(code, str) and code.strip().upper() in ("2", "STATUS_CODE_ERROR", "ERROR")


def _nanos(raw: object) -> int | None:
    """A uint64 as the specification writes it (a decimal string) or as a number; None for 0 or junk."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw.strip())
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    return raw if isinstance(raw, int) and raw > 0 else None


def _id(raw: object, size: int, *, root_allowed: bool = False) -> tuple[str, str]:
    """(lower-case hex id, "") or ("", why not). Hex is the specification's encoding, base64 gogo-protobuf's;
    a 64-bit trace id (Jaeger's and Zipkin's older ids) is widened as Jaeger widens it."""
    if raw is None or raw == "":
        return "", "" if root_allowed else "missing"
    if not isinstance(raw, str):
        return "", f"expected a hex or base64 string, got {shown(raw)}"
    text = raw.strip()
    widths = (size * 2, SPAN_BYTES * 2) if size == TRACE_BYTES else (size * 2,)
    hexadecimal = len(text) in widths and _HEX.fullmatch(text)
    value = text.lower().rjust(size * 2, "0") if hexadecimal else _base64(text, size)
    if not value:
        return "", f"not a hex or base64 id of {size} bytes: {shown(raw)}"
    if value.strip("0") == "":
        return "", "" if root_allowed else "all zeros, which OTLP calls an invalid id"
    return value, ""


def _base64(text: str, size: int) -> str:
    for alphabet in (None, b"-_"):  # standard, then URL-safe
        try:
            data = base64.b64decode(text + "=" * (-len(text) % 4), altchars=alphabet, validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(data) in (size, SPAN_BYTES if size == TRACE_BYTES else size):
            return data.hex().rjust(size * 2, "0")
    return ""

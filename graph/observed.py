"""Calls seen in traces, merged into the declared graph. Pure: no I/O, no clock.

A telemetry service name maps to an entity through, in order: the `oncall-graph/service-name`
annotation (comma-separated), `backstage.io/kubernetes-id`, then any name or alias. A name that
maps to nothing is never made an entity: it is an unknown service, listed with its calls, until an
alias or annotation maps it. Virtual clients (`user`, `unknown`: traffic from outside the traced
system) and self-loops are neither dependencies nor unknown services.

An observed call becomes an edge `calls` from client to server, unless a declared dependency
already links the two the same way: then the call corroborates that edge (one edge, declared and
observed). A producer-to-consumer call through a queue is `sends_to`, which never propagates
failure; a broker the spans name that maps to an entity is a dependency of both sides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from graph.edges import EdgeFacts, new_citation, new_edge_facts
from graph.evidence import OBSERVED
from graph.facts import Assertion, CallCount, Citation, Entity, Observation
from graph.naming.names import AliasIndex, match
from graph.relations import CALLS, DEPENDS_ON, RUNTIME_KINDS, SENDS_TO, propagates

SERVICE_NAME_ANNOTATION = "oncall-graph/service-name"
KUBERNETES_ID_ANNOTATION = "backstage.io/kubernetes-id"
VIRTUAL_CLIENTS = frozenset({"user", "unknown"})
MESSAGING, DATABASE, VIRTUAL_NODE = "messaging_system", "database", "virtual_node"
CLIENT, SERVER = "client", "server"

# The source kinds that read traces (declared in sync/sources/kinds.py; a test keeps both equal).
TRACE_SOURCE_KINDS = frozenset({"service-graph", "jaeger", "otlp"})
# Trace sources that count calls but not failures: their edges say so instead of "0% failed".
UNCOUNTED_FAILURES = frozenset({"jaeger"})

CallTable = Mapping[str, CallCount]  # by the observation's `citation.origin`
DRESSED = " · "  # between an observed citation's locator and its calls (no reader's locator holds it)


@dataclass(frozen=True, slots=True)
class UnknownService:
    """A telemetry name no entity answers to, the side it was seen on, and the observations citing it."""

    name: str
    side: str  # CLIENT or SERVER
    citations: tuple[Citation, ...]


@dataclass(frozen=True, slots=True)
class ObservedEdges:
    assertions: tuple[Assertion, ...]
    unknown: tuple[UnknownService, ...]


def is_trace_source(name: str) -> bool:
    """Whether a source name (`kind:location`) is one that reads traces."""
    return name.partition(":")[0] in TRACE_SOURCE_KINDS


class ServiceNames:
    """Telemetry names to entity refs, by the annotation, then the Kubernetes id, then any name."""

    def __init__(self, entities: Mapping[str, Entity], index: AliasIndex) -> None:
        self._index = index
        self._entities = entities
        self._annotated: dict[str, set[str]] = {}
        for annotation in (SERVICE_NAME_ANNOTATION, KUBERNETES_ID_ANNOTATION):
            for ref, entity in entities.items():
                for name in entity.annotations.get(annotation, "").split(","):
                    if name.strip():
                        self._annotated.setdefault(f"{annotation}\0{name.strip().lower()}", set()).add(ref)
        self._found: dict[str, str | None] = {}

    def __getstate__(self) -> dict[str, object]:
        # Pickled in a snapshot image while answers may be filling the cache: the copy is one C call
        # (atomic under the GIL), and the cache is left behind, so no pickling walks a growing dict.
        return {**self.__dict__, "_found": {}}

    def ref(self, name: str) -> str | None:
        """The entity `name` stands for, or None: unknown, or claimed by several (never a guess)."""
        if name in self._found:
            return self._found[name]
        found = self._lookup(name)
        self._found[name] = found
        return found

    def _lookup(self, name: str) -> str | None:
        key = name.strip().lower()
        for annotation in (SERVICE_NAME_ANNOTATION, KUBERNETES_ID_ANNOTATION):
            refs = self._annotated.get(f"{annotation}\0{key}", set())
            if len(refs) == 1:
                return next(iter(refs))
            if refs:
                return None
        resolution = match(self._index, name, allow=self._runtime)
        return resolution.entity

    def _runtime(self, ref: str) -> bool:
        entity = self._entities.get(ref)
        return entity is not None and entity.kind in RUNTIME_KINDS


def observed_edges(
    observations: Iterable[Observation],
    names: ServiceNames,
    declared: Mapping[tuple[str, str], str],
) -> ObservedEdges:
    """Observations as assertions between entities, with the names that map to nothing.

    `declared` holds each (src, dst) pair a declared propagating edge links, with its relation:
    a call between them joins that edge instead of making one of its own.
    """
    made: list[Assertion] = []
    unknown: dict[tuple[str, str], list[Citation]] = {}
    for o in observations:
        if o.client.strip().lower() in VIRTUAL_CLIENTS or o.client == o.server:
            continue
        src, dst = names.ref(o.client), names.ref(o.server)
        if src is None:
            unknown.setdefault((o.client, CLIENT), []).append(o.citation)
        if dst is None:
            unknown.setdefault((o.server, SERVER), []).append(o.citation)
        messaging = o.connection == MESSAGING
        if messaging and o.broker:
            made += _broker_edges(o, src, dst, names, declared)
        if src is None or dst is None or src == dst:
            continue
        rel = SENDS_TO if messaging else declared.get((src, dst), CALLS)
        made.append(Assertion(src, rel, dst, o.citation))
    listed = tuple(UnknownService(name, side, tuple(cited)) for (name, side), cited in sorted(unknown.items()))
    return ObservedEdges(tuple(made), listed)


def _broker_edges(
    o: Observation,
    producer: str | None,
    consumer: str | None,
    names: ServiceNames,
    declared: Mapping[tuple[str, str], str],
) -> list[Assertion]:
    """Both sides depend on the broker the spans name, when it maps to an entity: the messaging
    system (`kafka`) first, else the destination (a topic's name is too often another thing's)."""
    system, _, destination = o.broker.partition("/")
    broker = names.ref(system) or (names.ref(destination) if destination else None)
    if broker is None:
        return []
    return [
        Assertion(side, declared.get((side, broker), CALLS), broker, o.citation)
        for side in (producer, consumer)
        if side is not None and side != broker
    ]


def declared_pairs(assertions: Iterable[Assertion]) -> dict[tuple[str, str], str]:
    """Each (src, dst) a declared propagating edge links, with its relation (`depends_on` first)."""
    pairs: dict[tuple[str, str], str] = {}
    for a in assertions:
        if not propagates(a.rel) or a.citation.evidence == OBSERVED:
            continue
        have = pairs.get(key := (a.src, a.dst))
        if have is None or (have != DEPENDS_ON and (a.rel == DEPENDS_ON or a.rel < have)):
            pairs[key] = a.rel
    return pairs


def calls_of(edge: EdgeFacts, calls: CallTable) -> tuple[CallCount, ...]:
    """The counts behind an edge's observed citations (none for a declared-only edge)."""
    if not edge.observed:
        return ()
    return tuple(count for c in edge.citations if c.evidence == OBSERVED and (count := calls.get(c.origin)))


def total_calls(counts: Sequence[CallCount]) -> int:
    return sum(c.calls for c in counts)


def describe(citation: Citation, count: CallCount | None) -> str:
    """An observed citation as people read it: `service-graph http://prometheus:9090 · 3,000 calls
    in 7 d to 2026-12-06 03:00 UTC, 0.2% failed`; the locator alone when no count is known."""
    if count is None or DRESSED in citation.locator:  # told already: an answer may pass an edge twice
        return citation.locator
    if citation.source.partition(":")[0] in UNCOUNTED_FAILURES:
        failures = "failures not reported"
    else:
        failures = f"{f'{count.failed_share:.1%}' if count.failed else '0%'} failed"
    return (
        f"{citation.locator}{DRESSED}{count.calls:,} calls in {window_text(count.window_seconds)} "
        f"to {_utc(count.last_seen)}, {failures}"
    )


def dress(edge: EdgeFacts, calls: CallTable) -> EdgeFacts:
    """The edge with each observed citation's locator telling its calls: done per answer, on the
    edges shown, so a poll that changes only the counts never rebuilds the graph."""
    if not edge.observed or not calls:
        return edge
    # The slot fillers, not `dataclasses.replace`: `drift` dresses every undeclared call (bench: 150k
    # at 100k entities, where `replace` alone took a second).
    cited = tuple(
        new_citation(c.source, describe(c, calls.get(c.origin)), c.origin, c.text, c.extracted, c.evidence, c.url)
        if c.evidence == OBSERVED
        else c
        for c in edge.citations
    )
    e = edge
    return new_edge_facts(e.src, e.rel, e.dst, cited, e.weight, e.extracted, e.soft, e.via, e.observed)


def window_text(seconds: int) -> str:
    """`7 d`, `6 h`, `5 min`, `90 s`: the largest unit that divides the window."""
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


@lru_cache(maxsize=256)
def _utc(moment: datetime) -> str:
    # Cached: the counts of one read share their window's end, and `drift` describes every call.
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")

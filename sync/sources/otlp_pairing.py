"""Spans paired into calls and counted per edge, as Tempo's service-graph processor and the
Collector's servicegraph connector pair them. Pure: spans and options in, facts out.

A CLIENT or PRODUCER span and the SERVER or CONSUMER span whose parent it is make one call from
the client's service to the server's (producer to consumer: `messaging_system`). A client span no
server span pairs with names its server by its own attributes (`otlp_spans`), or makes no call: a
DNS lookup or a log shipper's request names nothing. A root server span makes no call unless it
names its caller: traffic from outside the traces is not a dependency, and no `user` is invented.

The window ends at the newest span read, not at the sync's clock: trace files are often captured
long before they are imported, and an unchanged file must read the same at every sync. An edge
with fewer calls than the noise floor over the window is left out, and counted in a note.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from graph.evidence import OBSERVED
from graph.facts import CallCount, Citation, Observation, Problem
from graph.observed import DATABASE, MESSAGING, VIRTUAL_NODE, window_text
from sync.sources.otlp_spans import Skipped, Span
from sync.sources.trace_options import TraceOptions

NANOS = 1_000_000_000
NOISE_SHOWN = 5  # edges named in the noise note; the rest counted
# When one pair of services is seen both ways, the connection that says most about the dependency.
_CONNECTION_RANK = {"": 0, DATABASE: 1, VIRTUAL_NODE: 2, MESSAGING: 3}


@dataclass(slots=True)
class SpanIndex:
    """The spans of one read by (trace, span id), each kept once, in reading order."""

    # (reading order, span): CLIENT and PRODUCER spans, then SERVER and CONSUMER spans
    outgoing: dict[tuple[str, str], tuple[int, Span]] = field(default_factory=dict)
    incoming: dict[tuple[str, str], tuple[int, Span]] = field(default_factory=dict)
    newest_ns: int = 0
    repeated: int = 0  # the same span read again (overlapping exports)

    def add(self, span: Span) -> None:
        table = self.outgoing if span.calls_out else self.incoming
        key = (span.trace, span.span)
        if key in table:
            self.repeated += 1
            return
        table[key] = (len(self.outgoing) + len(self.incoming), span)
        self.newest_ns = max(self.newest_ns, span.start_ns)


@dataclass(frozen=True, slots=True)
class Call:
    client: str
    server: str
    connection: str
    broker: str
    start_ns: int
    failed: bool
    exemplar: Span  # the span the citation points at: the client's, or a root server's
    order: int  # reading order of the exemplar: the first seen cites the edge


@dataclass(slots=True)
class Unpaired:
    """Spans that made no call, counted for the source's notes."""

    unnamed_clients: int = 0
    roots: int = 0
    orphans: int = 0  # server spans whose client span no file read holds


@dataclass(frozen=True, slots=True)
class ObservedCalls:
    observations: tuple[Observation, ...]
    calls: tuple[CallCount, ...]
    notes: tuple[Problem, ...]


def paired_calls(index: SpanIndex, unpaired: Unpaired) -> Iterator[Call]:
    """Every call the spans show, same-service pairs aside; `unpaired` counts the spans that made none."""
    served: set[tuple[str, str]] = set()
    for n, server in index.incoming.values():
        key = (server.trace, server.parent)
        found = index.outgoing.get(key) if server.parent else None
        if found is not None:
            served.add(key)
            order, client = found
            if client.service != server.service:
                yield _paired(client, server, order)
        elif server.names:
            if server.names != server.service:
                yield _named(server.names, server.service, server, n)
        elif server.parent:
            unpaired.orphans += 1
        else:
            unpaired.roots += 1
    for key, (order, client) in index.outgoing.items():
        if key in served:
            continue
        if not client.names:
            unpaired.unnamed_clients += 1
        elif client.names != client.service:
            yield _named(client.service, client.names, client, order)


def _paired(client: Span, server: Span, order: int) -> Call:
    connection = MESSAGING if client.messaging or server.messaging else DATABASE if client.database else ""
    failed = client.failed or server.failed
    broker = client.broker or server.broker
    return Call(client.service, server.service, connection, broker, client.start_ns, failed, client, order)


def _named(client: str, server: str, span: Span, order: int) -> Call:
    return Call(client, server, span.connection, span.broker, span.start_ns, span.failed, span, order)


@dataclass(slots=True)
class _Tally:
    first: Call
    calls: int = 0
    failed: int = 0
    first_ns: int = 0
    last_ns: int = 0
    connection: str = ""
    broker: str = ""

    def add(self, call: Call) -> None:
        if self.calls == 0 or call.order < self.first.order:
            self.first = call
        self.calls += 1
        self.failed += call.failed
        self.first_ns = min(self.first_ns or call.start_ns, call.start_ns)
        self.last_ns = max(self.last_ns, call.start_ns)
        if self.calls == 1 or _CONNECTION_RANK[call.connection] < _CONNECTION_RANK[self.connection]:
            self.connection = call.connection
        self.broker = self.broker or call.broker


def observe(source: str, where: str, index: SpanIndex, skipped: Skipped, options: TraceOptions) -> ObservedCalls:
    """One observation and one count per edge seen at least `options.min_calls` times in the window;
    notes (at `where`, the source's location) say what was left out and why."""
    unpaired = Unpaired()
    start = index.newest_ns - options.window_seconds * NANOS
    tallies: dict[tuple[str, str], _Tally] = {}
    before = 0
    for call in paired_calls(index, unpaired):
        if call.start_ns < start:
            before += 1
            continue
        tally = tallies.setdefault((call.client, call.server), _Tally(call))
        tally.add(call)
    kept = {pair: t for pair, t in tallies.items() if t.calls >= options.min_calls}
    noise = {pair: t for pair, t in tallies.items() if t.calls < options.min_calls}
    observations, counts = [], []
    for (client, server), tally in sorted(kept.items()):
        observation, count = _edge(source, client, server, tally, options)
        observations.append(observation)
        counts.append(count)
    notes = [
        *_noise_note(where, noise, options),
        *_unpaired_note(where, unpaired, skipped, index),
        *_window_note(where, before, index.newest_ns, options),
    ]
    return ObservedCalls(tuple(observations), tuple(counts), tuple(notes))


def _edge(source: str, client: str, server: str, tally: _Tally, options: TraceOptions) -> tuple[Observation, CallCount]:
    origin = f"{source}: {client} -> {server}"
    span = tally.first.exemplar
    locator = f"{span.where} trace {span.trace[:8]}… span {span.span}"
    cited = Citation(source, locator, origin=origin, text=f"{client} -> {server}", evidence=OBSERVED)
    observation = Observation(client, server, cited, connection=tally.connection, broker=tally.broker)
    count = CallCount(
        origin, tally.calls, tally.failed, options.window_seconds, moment(tally.last_ns), moment(tally.first_ns)
    )
    return observation, count


def moment(nanos: int) -> datetime:
    """A span's Unix time in nanoseconds as a UTC datetime (to the microsecond)."""
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=nanos // 1000)


def _noise_note(where: str, noise: dict[tuple[str, str], _Tally], options: TraceOptions) -> list[Problem]:
    if not noise:
        return []
    busiest = sorted(noise.items(), key=lambda item: (-item[1].calls, item[0]))
    named = ", ".join(f"{c} -> {s} ({_calls(t.calls)})" for (c, s), t in busiest[:NOISE_SHOWN])
    more = f" and {len(noise) - NOISE_SHOWN} more" if len(noise) > NOISE_SHOWN else ""
    message = (
        f"{_plural(len(noise), 'edge')} with fewer than {options.min_calls} calls in the window left out as noise "
        f"(ONCALL_GRAPH_OBSERVED_MIN_CALLS): {named}{more}"
    )
    return [Problem(where, message, severity="note")]


def _unpaired_note(where: str, unpaired: Unpaired, skipped: Skipped, index: SpanIndex) -> list[Problem]:
    parts = [
        (unpaired.unnamed_clients, "client span", "naming no server (no server span paired, no peer, database or "
         "messaging attribute: DNS lookups, log shipping)"),
        (unpaired.roots, "root server span", "(calls from outside the traces)"),
        (unpaired.orphans, "server span", "whose client span is in no file read"),
        (skipped.no_service, "span", "in a resource without service.name"),
        (index.repeated, "span", "read twice (the same trace and span id)"),
    ]  # fmt: skip
    said = [f"{_plural(count, noun)} {why}" for count, noun, why in parts if count]
    return [Problem(where, f"no call counted from {'; '.join(said)}", severity="note")] if said else []


def _window_note(where: str, before: int, newest_ns: int, options: TraceOptions) -> list[Problem]:
    if not before:
        return []
    end = moment(newest_ns).strftime("%Y-%m-%d %H:%M UTC")
    message = (
        f"{_calls(before)} before the window ({window_text(options.window_seconds)} to the newest span, {end}; "
        "ONCALL_GRAPH_OBSERVED_WINDOW) not counted"
    )
    return [Problem(where, message, severity="note")]


def _calls(count: int) -> str:
    return _plural(count, "call")


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"

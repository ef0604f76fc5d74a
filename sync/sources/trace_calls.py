"""Calls a trace source counted, as observations with their counts: what every trace reader shares.

Each edge is one `Observation` cited `<source>: <client> -> <server>` and one `CallCount` under
that key. Self-loops (a service's own internal spans, as Jaeger's memory store reports them) and
edges under the noise floor are not dependencies: they are dropped and counted in one note.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from graph.evidence import OBSERVED
from graph.facts import NOTE, CallCount, Citation, Observation, Problem, SourceFacts
from graph.observed import MESSAGING, window_text
from sync.sources.trace_options import TraceOptions


@dataclass(frozen=True, slots=True)
class CountedCall:
    """`client` called `server` `calls` times over the window, `failed` of them failing."""

    client: str
    server: str
    calls: int
    failed: int = 0
    connection: str = ""  # the service graph's connection_type: "", database, messaging_system, virtual_node


def observed_facts(
    source: str,
    kind: str,
    name: str,
    counted: Iterable[CountedCall],
    traces: TraceOptions,
    now: datetime,
    problems: Sequence[Problem] = (),
) -> SourceFacts:
    """One observation and one count per (client, server), the same pair's counts summed, each cited
    `<kind> <name>` (`service-graph http://prometheus:9090`); `name` is the URL without credentials."""
    locator = f"{kind} {name}"
    merged = _merged(counted)
    loops = [c for c in merged if c.client == c.server]
    noise = [c for c in merged if c.client != c.server and c.calls < traces.min_calls]
    kept = [c for c in merged if c.client != c.server and c.calls >= traces.min_calls]
    observations, counts = [], []
    for call in kept:
        origin = f"{source}: {call.client} -> {call.server}"
        text = f"{call.client} -> {call.server}"
        cited = Citation(source, locator, origin=origin, text=text, evidence=OBSERVED)
        observations.append(Observation(call.client, call.server, cited, connection=call.connection))
        failed = min(call.failed, call.calls)
        counts.append(CallCount(origin, call.calls, failed, traces.window_seconds, now))
    skipped = _skipped_note(name, len(noise), len(loops), traces)
    return SourceFacts(source, observations=tuple(observations), calls=tuple(counts), problems=(*problems, *skipped))


def _merged(counted: Iterable[CountedCall]) -> list[CountedCall]:
    """The same pair's counts summed. Seen both as a call and through a queue, the pair is a call
    (a synchronous call propagates failure: counting it as messaging would hide a dependency)."""
    by_pair: dict[tuple[str, str], list[CountedCall]] = {}
    for call in counted:
        by_pair.setdefault((call.client, call.server), []).append(call)
    merged = []
    for (client, server), calls in sorted(by_pair.items()):
        if len(calls) == 1:  # nearly every pair: an API answers each once (bench: 2 s of 200k edges)
            merged.append(calls[0])
            continue
        direct = [c for c in calls if c.connection != MESSAGING] or calls
        connection = max(direct, key=lambda c: (c.calls, c.connection)).connection
        total, failed = sum(c.calls for c in calls), sum(c.failed for c in calls)
        merged.append(CountedCall(client, server, total, failed, connection))
    return merged


def _skipped_note(where: str, noise: int, loops: int, traces: TraceOptions) -> tuple[Problem, ...]:
    parts = []
    if noise:
        floor = f"fewer than {traces.min_calls:,} calls in {window_text(traces.window_seconds)}"
        edges = f"{noise:,} edge{'s' * (noise != 1)}"
        parts.append(f"{edges} with {floor} skipped as noise (ONCALL_GRAPH_OBSERVED_MIN_CALLS)")
    if loops:
        parts.append(f"{loops:,} self-loop{'s' * (loops != 1)} (a service calling itself) skipped")
    return (Problem(where, "; ".join(parts), "", NOTE),) if parts else ()

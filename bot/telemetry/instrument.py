"""One answered query, measured three ways: its latency histogram, a log line, and a trace span.

Handlers open `observed_query` around the whole answer; the code that resolves and walks adds
what it found with `note_entities` / `note_counts`. The note travels in a context variable (as
the span does in OpenTelemetry's context), so the reply functions keep their signatures and stay
free of Slack and of tracing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from bot.telemetry import tracing
from bot.telemetry.metrics import Metrics

log = logging.getLogger(__name__)


@dataclass
class QueryNote:
    """What one query found; filled in while it runs."""

    command: str
    text: str
    entities: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # e.g. impacted, dependencies, edges


_current: ContextVar[QueryNote | None] = ContextVar("oncall_graph_query", default=None)


@contextmanager
def observed_query(metrics: Metrics, command: str, text: str) -> Iterator[QueryNote]:
    started = time.perf_counter()
    note = QueryNote(command, text)
    token = _current.set(note)
    try:
        with tracing.query_span(command, text) as span:
            try:
                yield note
            finally:
                tracing.annotate_query(span, note.entities, note.counts)
    finally:
        _current.reset(token)
        seconds = time.perf_counter() - started
        metrics.latency.labels(command).observe(seconds)
    entity = note.entities[0] if note.entities else None
    log.info(
        "answered %s %r: %s in %.3f s", command, text, entity or "no entity", seconds,
        extra={"command": command, "query": text, "entity": entity, "entities": note.entities, **note.counts,
               "duration": round(seconds, 4)},
    )  # fmt: skip


def note_entities(*refs: str | None) -> None:
    """The entities the running query resolved to (no-op outside a query)."""
    note = _current.get()
    if note is not None:
        note.entities.extend(ref for ref in refs if ref and ref not in note.entities)


def note_counts(**counts: int) -> None:
    """Sizes of the subgraph the running query walked: impacted=…, dependencies=…, edges=…."""
    note = _current.get()
    if note is not None:
        note.counts.update(counts)

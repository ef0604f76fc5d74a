"""OpenTelemetry traces, the one module that touches OpenTelemetry.

Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: until `start_tracing` installs the SDK, the API's
tracer is a no-op, so the spans below cost next to nothing and export nowhere. The SDK and the
OTLP/HTTP exporter are imported only when tracing is turned on.

The SDK reads its own standard variables too (OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_SCHEDULE_DELAY,
OTEL_TRACES_SAMPLER, ...); the endpoint and service name come from our settings so `.env` works.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import Span

log = logging.getLogger(__name__)
_tracer = trace.get_tracer("oncall-graph")  # a proxy: picks up the provider once one is installed
PREFIX = "oncall_graph."


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL for a base endpoint, as the standard variable means it."""
    return f"{endpoint.strip().removesuffix('/')}/v1/traces"


def start_tracing(endpoint: str, service_name: str) -> Callable[[], None]:
    """Export spans in batches to `endpoint`; returns the shutdown that flushes what is left."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(endpoint))))
    trace.set_tracer_provider(provider)
    log.info("exporting traces to %s", traces_url(endpoint))
    return provider.shutdown


@contextmanager
def query_span(command: str, text: str) -> Iterator[Span]:
    """Around one answer (command, mention or alert); an exception is recorded on it."""
    attributes = {f"{PREFIX}command": command, f"{PREFIX}query.text": text}
    with _tracer.start_as_current_span(f"oncall-graph {command}", attributes=attributes) as span:
        yield span


def annotate_query(span: Span, entities: Sequence[str], counts: Mapping[str, int]) -> None:
    span.set_attribute(f"{PREFIX}entities", list(entities))
    span.set_attribute(f"{PREFIX}resolved", bool(entities))
    for name, count in counts.items():
        span.set_attribute(f"{PREFIX}{name}_count", count)


# The stages of one answer, each a child span of its query span (the signature's, of its request's),
# in the order they run. `bench/slack_bench.py` tabulates them; an operator sees them in any trace.
STAGES = (
    "signature",  # the Slack signature checked and the body's shape read, before Bolt
    "claim",  # the answer's delivery key taken (bot/slack/claims); a slash command's is written
    # while its answer is computed, and this is the wait for that write, after rendering
    "slot",  # the wait for a work slot (bot/slack/answer_slots), before the walk and before rendering
    "resolution",  # the name resolved for the viewer
    "freshness",  # how stale the snapshot is judged
    "walk",  # the walk, hidden entities left out as it goes
    "passages",  # the passages to quote, redacted for the viewer
    "live",  # the wait for what is failing now (PagerDuty, traces), read while the graph is walked
    "rendering",  # the answer rendered into Slack blocks, escaped at the one boundary
    "post",  # the message posted to Slack (retries included)
    "settlement",  # the delivery key settled delivered or failed
)
STAGE = f"{PREFIX}stage"


@contextmanager
def request_span(front: str) -> Iterator[None]:
    """Around one request to a front (its reading, verifying and ack); the answer it starts is its child."""
    with _tracer.start_as_current_span(f"oncall-graph {front} request"):
        yield


@contextmanager
def stage_span(name: str) -> Iterator[None]:
    """One stage of the answer running in this context; nothing at all until a provider is installed
    (a no-op span still costs a context switch, several per answer)."""
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        yield
        return
    with _tracer.start_as_current_span(f"oncall-graph {name}", attributes={STAGE: name}, record_exception=False):
        yield


@contextmanager
def sync_span() -> Iterator[Span]:
    with _tracer.start_as_current_span("oncall-graph sync") as span:
        yield span


def note_source(source: str, outcome: str, seconds: float, error: str) -> None:
    """One source's result, as an event on the sync span it ran in."""
    attributes: dict[str, str | float] = {
        f"{PREFIX}source": source,
        f"{PREFIX}outcome": outcome,
        f"{PREFIX}duration_seconds": seconds,
    }
    if error:
        attributes[f"{PREFIX}error"] = error
    trace.get_current_span().add_event("source synced", attributes)


def note_graph(entities: int, edges: int, retired_edges: int) -> None:
    span = trace.get_current_span()
    span.set_attribute(f"{PREFIX}entities_count", entities)
    span.set_attribute(f"{PREFIX}edges_count", edges)
    span.set_attribute(f"{PREFIX}retired_edges_count", retired_edges)

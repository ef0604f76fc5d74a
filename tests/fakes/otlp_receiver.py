"""A local OpenTelemetry collector, as far as traces over OTLP/HTTP go: POST /v1/traces with a
protobuf ExportTraceServiceRequest, answered 200 with an empty ExportTraceServiceResponse.

Point OTEL_EXPORTER_OTLP_ENDPOINT at `receiver.url`; `wait_for` wakes on each export.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests.fakes.serving import send, serving


def plain(value: AnyValue) -> Any:
    """An OTLP attribute value as a Python value."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [plain(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    resource: dict[str, Any]
    status_code: int
    trace_id: str = ""  # hex, as trace viewers show them
    span_id: str = ""
    parent_id: str = ""  # "" for a trace's root
    start_ns: int = 0
    end_ns: int = 0

    @property
    def seconds(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


@dataclass
class OtlpReceiver:
    url: str = ""
    spans: list[ReceivedSpan] = field(default_factory=list)
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def receive(self, request: ExportTraceServiceRequest) -> None:
        found = []
        for resource_spans in request.resource_spans:
            resource = {a.key: plain(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {a.key: plain(a.value) for a in span.attributes}
                    events = [(e.name, {a.key: plain(a.value) for a in e.attributes}) for e in span.events]
                    ids = (span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex())
                    times = (span.start_time_unix_nano, span.end_time_unix_nano)
                    found.append(ReceivedSpan(span.name, attributes, events, resource, span.status.code, *ids, *times))
        with self._changed:
            self.spans.extend(found)
            self._changed.notify_all()

    def named(self, name: str) -> list[ReceivedSpan]:
        with self._changed:
            return [s for s in self.spans if s.name == name]

    def wait_for(self, predicate: Callable[[], object], timeout: float = 20) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: bool(predicate()), timeout=timeout):
                names = [s.name for s in self.spans]
                raise AssertionError(f"OTLP receiver: condition not met within {timeout}s; spans: {names}")


def _decoded(body: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    return body


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                send(self, 404, b"", "text/plain", {})
                return
            request = ExportTraceServiceRequest.FromString(_decoded(body, self.headers.get("Content-Encoding", "")))
            receiver.receive(request)
            send(self, 200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf", {})

        def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per export is noise
            return

    with serving(Handler) as url:
        receiver.url = url
        yield receiver

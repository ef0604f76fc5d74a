"""Service-graph metrics from a Prometheus-compatible HTTP API (Prometheus, Thanos, Mimir,
VictoriaMetrics), as observed calls.

Tempo's metrics-generator, Grafana Alloy and the OpenTelemetry Collector's servicegraph connector
write `<prefix>_request_total` and `<prefix>_request_failed_total`, labelled `client`, `server`
and `connection_type`. The store aggregates them; the bot reads one instant query over
`/api/v1/query` at the sync's clock, never a span:

    label_replace(sum by (client, server, connection_type) (increase(<prefix>_request_total[<w>s])),
                  "oncall_graph_count", "calls", "", "")
    or
    label_replace(sum by (client, server, connection_type) (increase(<prefix>_request_failed_total[<w>s])),
                  "oncall_graph_count", "failed", "", "")

Both sums in one query, told apart by the label `label_replace` adds (`or` keeps every series of
its right side, since none has a left one's labels): one request, one evaluation time, so calls
and failures are counted over the same window, and one answer to bound and check. `increase`
extrapolates to the window's ends, so values are fractional strings: rounded to whole calls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from graph.facts import Problem, SourceFacts
from sync.sources.catalog_fetch import bearer_headers
from sync.sources.reading.bounded_http import api_endpoint, bounded_get, json_answer
from sync.sources.reading.shown import shown
from sync.sources.reading.textfiles import FetchError, display_name
from sync.sources.trace_calls import CountedCall, observed_facts
from sync.sources.trace_options import TraceOptions

QUERY_PATH = "api/v1/query"
COUNT_LABEL = "oncall_graph_count"  # which sum a series of the answer belongs to
CALLS, FAILED = "calls", "failed"
TENANT_HEADER = "X-Scope-OrgID"
_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
API = "a Prometheus-compatible query API"
TOKEN = "ONCALL_GRAPH_SERVICE_GRAPH_TOKEN"


class ServiceGraphError(FetchError):
    """The service graph could not be read at all: an error answer, refused, not Prometheus' JSON."""


def service_graph_query(prefix: str, window_seconds: int) -> str:
    """The one instant query: calls and failed calls per (client, server, connection_type)."""

    def summed(metric: str, count: str) -> str:
        summed = f"sum by (client, server, connection_type) (increase({prefix}_{metric}[{window_seconds}s]))"
        return f'label_replace({summed}, "{COUNT_LABEL}", "{count}", "", "")'

    return f"{summed('request_total', CALLS)} or {summed('request_failed_total', FAILED)}"


def read_service_graph(
    source: str,
    location: str,
    *,
    token: str = "",
    timeout: float = 10.0,
    traces: TraceOptions = TraceOptions(),  # noqa: B008 - frozen
    now: datetime | None = None,
) -> SourceFacts:
    """The calls over the window ending `now`; raises ServiceGraphError when the API cannot be read."""
    moment = now or datetime.now(UTC)
    body = query_service_graph(location, token=token, timeout=timeout, traces=traces, at=moment)
    return parse_service_graph(source, display_name(location), body, traces, moment)


def query_service_graph(location: str, *, token: str, timeout: float, traces: TraceOptions, at: datetime) -> object:
    """The decoded answer to `service_graph_query` over `traces.window_seconds` ending `at`: the one
    request the sync's reader and the answers' live reading both send. Raises ServiceGraphError when
    the API cannot be read (refused, an error answer, not JSON)."""
    if not _METRIC_NAME.match(traces.metric_prefix):
        raise ServiceGraphError(
            f"metric prefix {shown(traces.metric_prefix)} is not a Prometheus metric name "
            "(ONCALL_GRAPH_SERVICE_GRAPH_PREFIX: letters, digits, _ and :)"
        )
    try:
        url, params = api_endpoint(location, QUERY_PATH, reserved=("query", "time"))
    except ValueError as exc:
        raise ServiceGraphError(f"service graph: {exc}") from None
    params |= {"query": service_graph_query(traces.metric_prefix, traces.window_seconds), "time": _instant(at)}
    headers = {"Accept": "application/json", **bearer_headers(token)}
    if traces.tenant:
        headers[TENANT_HEADER] = traces.tenant
    answer = bounded_get(url, params=params, headers=headers, timeout=timeout)
    return json_answer(display_name(url), answer, ServiceGraphError, api=API, token_setting=TOKEN, told=_error_text)


def _instant(moment: datetime) -> str:
    return f"{moment.timestamp():.3f}"


def _error_text(body: object) -> str:
    """Prometheus' own error (`{"status": "error", "errorType", "error"}`), or "" for any other body."""
    if not isinstance(body, Mapping) or body.get("status") != "error":
        return ""
    kind, error = body.get("errorType"), body.get("error")
    return ": ".join(str(part) for part in (kind, error) if isinstance(part, str) and part) or "no detail"


def parse_service_graph(source: str, name: str, body: object, traces: TraceOptions, now: datetime) -> SourceFacts:
    """The calls of one answer to `service_graph_query`; each bad series is a problem, the rest kept.

    Raises ServiceGraphError when the answer is not a successful instant vector at all.
    """
    counted, problems = counted_calls(name, body, traces.metric_prefix)
    return observed_facts(source, "service-graph", name, counted, traces, now, problems)


def counted_calls(name: str, body: object, prefix: str) -> tuple[list[CountedCall], list[Problem]]:
    """Calls and failed calls per (client, server, connection_type) of one answer, and its problems.

    Raises ServiceGraphError when the answer is not a successful instant vector at all.
    """
    data = body.get("data") if isinstance(body, Mapping) and body.get("status") == "success" else None
    result = data.get("result") if isinstance(data, Mapping) and data.get("resultType") == "vector" else None
    if not isinstance(result, list):
        raise ServiceGraphError(f"{name}: expected a successful instant vector (status, data.resultType, data.result)")
    warnings = body.get("warnings") if isinstance(body, Mapping) else None
    said = warnings if isinstance(warnings, list) else []
    problems = [Problem(name, f"the server warned: {shown(w)}", "warnings") for w in said]
    calls: dict[tuple[str, str, str], int] = {}
    failed: dict[tuple[str, str, str], int] = {}
    for index, item in enumerate(result):
        read = _series(name, index, item, problems)
        if read is not None:
            count, key, value = read
            (failed if count == FAILED else calls)[key] = value
    for client, server, _ in sorted(set(failed) - set(calls)):
        total = f"{prefix}_request_total"
        message = f"failed calls {client} -> {server} with no calls counted (is {total} there?)"
        problems.append(Problem(name, message, "data.result"))
    counted = [CountedCall(c, s, n, failed.get((c, s, k), 0), k) for (c, s, k), n in calls.items()]
    return counted, problems


def _series(
    name: str, index: int, item: object, problems: list[Problem]
) -> tuple[str, tuple[str, str, str], int] | None:
    """(which sum, (client, server, connection_type), whole calls) of one series, or None: a problem."""
    where = f"data.result[{index}]"
    labels = item.get("metric") if isinstance(item, Mapping) else None
    value = item.get("value") if isinstance(item, Mapping) else None
    if not isinstance(labels, Mapping) or not isinstance(value, list) or len(value) != 2:
        problems.append(Problem(name, "not a series with metric and value; skipped", where, "error"))
        return None
    client, server = labels.get("client"), labels.get("server")
    if not isinstance(client, str) or not client.strip() or not isinstance(server, str) or not server.strip():
        message = (
            f"a series without client and server labels: {shown({k: v for k, v in labels.items() if k != COUNT_LABEL})}"
        )
        problems.append(Problem(name, message, where, "error"))
        return None
    try:
        number = float(value[1])
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number < 0:
        problems.append(Problem(name, f"not a count of calls: {shown(value[1])}", f"{where}.value", "error"))
        return None
    connection = labels.get("connection_type")
    key = (client.strip(), server.strip(), connection.strip() if isinstance(connection, str) else "")
    return (FAILED if labels.get(COUNT_LABEL) == FAILED else CALLS), key, math.floor(number + 0.5)

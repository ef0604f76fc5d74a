"""Dependency links from a Jaeger query service (`GET /api/dependencies`), as observed calls.

Jaeger aggregates its spans into links `{parent, child, callCount}` (the caller, the callee and
the calls over `lookback` milliseconds before `endTs`): the v1/v2 query API answers
`{"data": [...], "errors": ...}`, jaeger-ui's samples are a bare array, and protojson writes
`callCount` as a string; all are read. Jaeger counts calls, not failures: every edge carries 0
failed calls, which the answers say are not reported (`graph.observed.describe`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from graph.facts import Problem, SourceFacts
from sync.sources.catalog_fetch import bearer_headers
from sync.sources.reading.bounded_http import api_endpoint, bounded_get, json_answer
from sync.sources.reading.shown import shown
from sync.sources.reading.textfiles import FetchError, display_name
from sync.sources.trace_calls import CountedCall, observed_facts
from sync.sources.trace_options import TraceOptions

DEPENDENCIES_PATH = "api/dependencies"
API = "a Jaeger query service"
TOKEN = "ONCALL_GRAPH_JAEGER_TOKEN"


class JaegerError(FetchError):
    """Jaeger's dependencies could not be read at all: an error answer, refused, not its JSON."""


def read_jaeger(
    source: str,
    location: str,
    *,
    token: str = "",
    timeout: float = 10.0,
    traces: TraceOptions = TraceOptions(),  # noqa: B008 - frozen
    now: datetime | None = None,
) -> SourceFacts:
    """The links over the window ending `now`; raises JaegerError when the API cannot be read."""
    moment = now or datetime.now(UTC)
    try:
        url, params = api_endpoint(location, DEPENDENCIES_PATH, reserved=("endTs", "lookback"))
    except ValueError as exc:
        raise JaegerError(f"Jaeger: {exc}") from None
    params |= {"endTs": str(int(moment.timestamp() * 1000)), "lookback": str(traces.window_seconds * 1000)}
    headers = {"Accept": "application/json", **bearer_headers(token)}
    answer = bounded_get(url, params=params, headers=headers, timeout=timeout)
    body = json_answer(display_name(url), answer, JaegerError, api=API, token_setting=TOKEN, told=_failed)
    return parse_dependencies(source, display_name(location), body, traces, moment)


def _failed(body: object) -> str:
    """Jaeger's errors when it answered with no links at all (`{"data": null, "errors": [...]}`)."""
    has_links = isinstance(body, list) or (isinstance(body, Mapping) and body.get("data") is not None)
    return "" if has_links else _errors(body)


def _errors(body: object) -> str:
    """Jaeger's own error messages (`errors: [{code, msg}]`)."""
    errors = body.get("errors") if isinstance(body, Mapping) else None
    if not isinstance(errors, list):
        return ""
    return "; ".join(e["msg"] for e in errors if isinstance(e, Mapping) and isinstance(e.get("msg"), str))


def parse_dependencies(source: str, name: str, body: object, traces: TraceOptions, now: datetime) -> SourceFacts:
    """The links of one answer, a bare array or `{"data": [...]}`; each bad link is a problem.

    Raises JaegerError when the answer holds no list of links, or only Jaeger's errors.
    """
    links = body.get("data") if isinstance(body, Mapping) else body
    errors = _errors(body)
    if links is None and errors:
        raise JaegerError(f"{name}: Jaeger answered with errors: {shown(errors)}")
    if not isinstance(links, list):
        raise JaegerError(f'{name}: expected an array of dependency links, or {{"data": [...]}}')
    problems = [Problem(name, f"Jaeger reported errors: {shown(errors)}", "errors")] if errors else []
    counted = [call for index, link in enumerate(links) if (call := _link(name, index, link, problems)) is not None]
    return observed_facts(source, "jaeger", name, counted, traces, now, problems)


def _link(name: str, index: int, link: object, problems: list[Problem]) -> CountedCall | None:
    where = f"data[{index}]"
    if not isinstance(link, Mapping):
        problems.append(Problem(name, "not an object; skipped", where, "error"))
        return None
    parent, child = link.get("parent"), link.get("child")
    if not isinstance(parent, str) or not parent.strip() or not isinstance(child, str) or not child.strip():
        problems.append(Problem(name, "a link needs a parent and a child service name; skipped", where, "error"))
        return None
    calls = _count(link.get("callCount"))
    if calls is None:
        message = f"not a count of calls: {shown(link.get('callCount'))}"
        problems.append(Problem(name, message, f"{where}.callCount", "error"))
        return None
    return CountedCall(parent.strip(), child.strip(), calls)


def _count(value: object) -> int | None:
    """A whole, non-negative number of calls: JSON's number, or protojson's uint64 as a string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return None

"""The Jaeger reader against a fake query service on a real socket, in each documented shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from graph.evidence import OBSERVED
from graph.facts import NOTE, CallCount, SourceFacts
from sync.sources.jaeger import JaegerError, parse_dependencies, read_jaeger
from sync.sources.reading.limits import ReadLimits, reading_with
from sync.sources.reading.textfiles import FetchError
from sync.sources.registry import SourceAccess, SourceSpec, read_changed
from sync.sources.trace_options import DAY, TraceOptions
from tests.fakes.jaeger_query import Call, JaegerQuery, jaeger_query

NOW = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)
WEEK = TraceOptions()


def hotrod(query: JaegerQuery) -> None:
    """HotROD's links, as Jaeger's memory store counts them, a self-loop included (jaeger#9089)."""
    for parent, child, calls in [
        ("frontend", "customer", 29), ("frontend", "driver", 29), ("frontend", "route", 290),
        ("customer", "mysql", 29), ("driver", "redis-manual", 348), ("frontend", "frontend", 58),
        ("route", "driver", 3),  # under the noise floor
    ]:  # fmt: skip
        query.calls.append(Call(parent, child, calls, NOW - timedelta(hours=1)))
    query.calls.append(Call("frontend", "customer", 11, NOW - timedelta(days=2)))  # later in the week
    query.calls.append(Call("frontend", "customer", 1_000, NOW - timedelta(days=8)))  # before the window


@pytest.fixture
def jaeger() -> Iterator[JaegerQuery]:
    with jaeger_query() as query:
        hotrod(query)
        yield query


def read(query: JaegerQuery, traces: TraceOptions = WEEK, location: str = "", token: str = "") -> SourceFacts:
    return read_jaeger(f"jaeger:{query.url}", location or query.url, token=token, traces=traces, now=NOW)


def counts(facts: SourceFacts) -> dict[tuple[str, str], int]:
    by_key = {c.key: c for c in facts.calls}
    assert all(c.failed == 0 for c in facts.calls)  # Jaeger counts no failures
    return {(o.client, o.server): by_key[o.citation.origin].calls for o in facts.observations}


HOTROD = {
    ("frontend", "customer"): 40,
    ("frontend", "driver"): 29,
    ("frontend", "route"): 290,
    ("customer", "mysql"): 29,
    ("driver", "redis-manual"): 348,
}


@pytest.mark.parametrize(("bare", "string_counts"), [(False, False), (True, False), (False, True), (True, True)])
def test_links_in_every_documented_shape_read_the_same(jaeger: JaegerQuery, bare: bool, string_counts: bool) -> None:
    jaeger.bare, jaeger.string_counts = bare, string_counts
    assert counts(read(jaeger)) == HOTROD


def test_the_window_ends_at_the_clock_and_reaches_back_as_far_as_the_setting(jaeger: JaegerQuery) -> None:
    day = read(jaeger, TraceOptions(window_seconds=DAY))
    params, _ = jaeger.requests[-1]
    assert params == {"endTs": str(int(NOW.timestamp() * 1000)), "lookback": str(DAY * 1000)}
    assert counts(day)[("frontend", "customer")] == 29  # the call two days back is out of a day's window
    assert {c.window_seconds for c in day.calls} == {DAY} and {c.last_seen for c in day.calls} == {NOW}


def test_each_link_is_a_cited_observation_and_self_loops_and_noise_a_note(jaeger: JaegerQuery) -> None:
    facts = read(jaeger)

    source = f"jaeger:{jaeger.url}"
    cited = next(o.citation for o in facts.observations if o.server == "redis-manual")
    assert (cited.source, cited.locator, cited.evidence) == (source, f"jaeger {jaeger.url}", OBSERVED)
    assert (cited.origin, cited.text) == (f"{source}: driver -> redis-manual", "driver -> redis-manual")
    assert CallCount(cited.origin, 348, 0, 7 * DAY, NOW) in facts.calls
    assert {o.connection for o in facts.observations} == {""}
    (note,) = facts.problems
    assert (note.where, note.severity) == (jaeger.url, NOTE)
    assert note.message == (
        "1 edge with fewer than 10 calls in 7 d skipped as noise (ONCALL_GRAPH_OBSERVED_MIN_CALLS); "
        "1 self-loop (a service calling itself) skipped"
    )


def test_a_base_path_is_kept_the_whole_endpoint_may_be_given_and_parameters_pass() -> None:
    with jaeger_query(path_prefix="/jaeger") as query:
        hotrod(query)
        for location in (query.url, query.url + "/", query.url + "/api/dependencies", query.url + "?service=driver"):
            assert counts(read(query, location=location)) == HOTROD
        assert query.requests[-1][0]["service"] == "driver"
        read(query, location=query.url + "?endTs=1&lookback=1")
        assert query.requests[-1][0]["endTs"] == str(int(NOW.timestamp() * 1000))
        with pytest.raises(JaegerError, match="HTTP 404 Not Found: nothing answers as a Jaeger query service there"):
            read(query, location=query.url.removesuffix("/jaeger"))


def test_the_token_is_sent_as_a_bearer_through_the_registry(jaeger: JaegerQuery) -> None:
    access = SourceAccess(tokens={"jaeger": "t0ken\n"}, traces=TraceOptions(min_calls=1))
    done = read_changed(SourceSpec("jaeger", jaeger.url), "", access, now=NOW)
    assert done is not None and isinstance(done[0], SourceFacts)
    assert counts(done[0])[("route", "driver")] == 3
    assert jaeger.requests[-1][1]["Authorization"] == "Bearer t0ken"
    read(jaeger)
    assert "Authorization" not in jaeger.requests[-1][1]


def _errors(*messages: str) -> bytes:
    errors = [{"code": 500, "msg": m} for m in messages]
    return json.dumps({"data": None, "total": 0, "limit": 0, "offset": 0, "errors": errors}).encode()


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (500, _errors("elasticsearch: index jaeger-dependencies-* not found"),
         "HTTP 500 Internal Server Error: elasticsearch: index jaeger-dependencies-* not found"),
        (503, b"upstream connect error", "HTTP 503 Service Unavailable"),
        (403, b"forbidden", "HTTP 403 Forbidden: the token was refused (ONCALL_GRAPH_JAEGER_TOKEN)"),
        (200, b"\x00\xffgarbage", "the answer is not JSON; is this a Jaeger query service?"),
        (200, b"<!doctype html><title>Jaeger UI</title>", "the answer is not JSON"),
        (200, _errors("storage unavailable"), "HTTP 200 OK: storage unavailable"),
        (200, b'{"data": {"parent": "a"}}', 'expected an array of dependency links, or {"data": [...]}'),
    ],
)  # fmt: skip
def test_an_error_answer_fails_the_read_saying_what_jaeger_said(
    jaeger: JaegerQuery, status: int, body: bytes, said: str
) -> None:
    jaeger.answers.append((status, body))
    with pytest.raises(JaegerError) as raised:
        read(jaeger)
    assert said in str(raised.value)
    assert counts(read(jaeger)) == HOTROD  # the next answer is good again


def test_a_slow_or_huge_answer_fails_within_the_read_limits(jaeger: JaegerQuery) -> None:
    jaeger.calls += [Call(f"svc-{n}", f"svc-{n + 1}", 50, NOW) for n in range(200)]
    with reading_with(ReadLimits(max_file_bytes=4_000)), pytest.raises(FetchError, match="too big"):
        read(jaeger)
    with reading_with(ReadLimits(deadline_seconds=0.001)), pytest.raises(FetchError, match="Timeout|deadline"):
        read(jaeger)


def test_bad_links_are_problems_and_jaegers_own_errors_beside_data_a_warning() -> None:
    body = {
        "data": [
            {"parent": "frontend", "child": "driver", "callCount": 29},
            {"parent": "frontend", "child": "driver", "callCount": "11"},  # the same link twice: summed
            {"parent": "frontend", "callCount": 5},
            {"parent": "a", "child": "b", "callCount": "many"},
            {"parent": "a", "child": "b", "callCount": -3},
            {"parent": "a", "child": "b", "callCount": True},
            {"parent": "a", "child": "b", "callCount": "²"},
            ["frontend", "driver"],
        ],
        "errors": [{"code": 500, "msg": "one storage shard timed out"}],
    }
    facts = parse_dependencies("jaeger:x", "http://jaeger:16686", body, WEEK, NOW)

    assert counts(facts) == {("frontend", "driver"): 40}
    said = [(p.field, p.severity, p.message) for p in facts.problems]
    assert said == [
        ("errors", "warning", "Jaeger reported errors: 'one storage shard timed out'"),
        ("data[2]", "error", "a link needs a parent and a child service name; skipped"),
        ("data[3].callCount", "error", "not a count of calls: 'many'"),
        ("data[4].callCount", "error", "not a count of calls: -3"),
        ("data[5].callCount", "error", "not a count of calls: True"),
        ("data[6].callCount", "error", "not a count of calls: '²'"),
        ("data[7]", "error", "not an object; skipped"),
    ]

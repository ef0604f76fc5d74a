"""The service-graph reader against a real Prometheus (or, where none is installed, its fake), and
against a plain HTTP server for the answers a Prometheus-compatible API gives when it fails."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest

from graph.evidence import OBSERVED
from graph.facts import NOTE, CallCount, SourceFacts
from sync.sources.reading.limits import ReadLimits, reading_with
from sync.sources.reading.textfiles import FetchError
from sync.sources.registry import SourceAccess, SourceSpec, read_changed
from sync.sources.service_graph import (
    ServiceGraphError,
    parse_service_graph,
    read_service_graph,
    service_graph_query,
)
from sync.sources.trace_options import TraceOptions
from tests.fakes.http_source import source_server
from tests.fakes.prometheus_server import PrometheusServer, fake_prometheus
from tests.service_graph_series import END, MANY, MANY_EDGES, POLLED, SERIES, SHOP_CALLS

WEEK = TraceOptions()


def read(server: PrometheusServer, traces: TraceOptions = WEEK, location: str = "") -> SourceFacts:
    return read_service_graph(f"service-graph:{server.url}", location or server.url, traces=traces, now=END)


def counts(facts: SourceFacts) -> dict[tuple[str, str], tuple[int, int]]:
    by_key = {c.key: c for c in facts.calls}
    return {(o.client, o.server): (by_key[o.citation.origin].calls, by_key[o.citation.origin].failed)
            for o in facts.observations}  # fmt: skip


def test_the_query_sums_calls_and_failures_over_the_window_in_one_instant_query() -> None:
    summed = "sum by (client, server, connection_type) (increase(traces_service_graph_request{}_total[604800s]))"
    assert service_graph_query("traces_service_graph", 604_800) == (
        f'label_replace({summed.format("")}, "oncall_graph_count", "calls", "", "")'
        f' or label_replace({summed.format("_failed")}, "oncall_graph_count", "failed", "", "")'
    )


def test_each_edge_is_one_cited_observation_with_its_rounded_calls_and_failures(
    service_graph_prometheus: PrometheusServer,
) -> None:
    facts = read(service_graph_prometheus)

    assert counts(facts) == {
        ("frontend", "checkoutservice"): (650, 13),
        ("checkoutservice", "cartservice"): (650, 13),
        ("checkoutservice", "payments"): (260, 0),
        ("cartservice", "orders"): (1300, 0),
        ("checkoutservice", "accounting"): (130, 0),
        ("user", "frontend"): (650, 0),
        ("frontend", "external-payments-platform"): (130, 0),
        ("payments", "ledger"): (596, 0),  # 595.8 after a counter reset, extrapolated: rounded
    }
    assert {(c, s): n for (c, s), (n, _) in counts(facts).items()} == {
        pair: calls for pair, calls in SHOP_CALLS.items() if pair[0] != pair[1]
    } | {("payments", "ledger"): 596}
    kinds = {(o.client, o.server): o.connection for o in facts.observations}
    assert kinds[("cartservice", "orders")] == "database"
    assert kinds[("checkoutservice", "accounting")] == "messaging_system"
    assert kinds[("checkoutservice", "payments")] == kinds[("checkoutservice", "cartservice")] == ""

    source = f"service-graph:{service_graph_prometheus.url}"
    cited = next(o.citation for o in facts.observations if o.client == "checkoutservice" and o.server == "cartservice")
    assert cited.source == source and cited.evidence == OBSERVED
    assert cited.locator == f"service-graph {service_graph_prometheus.url}"
    assert cited.origin == f"{source}: checkoutservice -> cartservice"
    assert cited.text == "checkoutservice -> cartservice"
    count = next(c for c in facts.calls if c.key == cited.origin)
    assert count == CallCount(cited.origin, 650, 13, 7 * 86_400, END)


def test_self_loops_and_edges_under_the_noise_floor_are_dropped_and_counted_in_a_note(
    service_graph_prometheus: PrometheusServer,
) -> None:
    facts = read(service_graph_prometheus)

    assert not {("checkoutservice", "checkoutservice"), ("checkoutservice", "rarely-called")} & set(counts(facts))
    (note,) = facts.problems
    assert note.severity == NOTE and note.where == service_graph_prometheus.url
    assert note.message == (
        "1 edge with fewer than 10 calls in 7 d skipped as noise (ONCALL_GRAPH_OBSERVED_MIN_CALLS); "
        "1 self-loop (a service calling itself) skipped"
    )
    floor = read(service_graph_prometheus, TraceOptions(min_calls=1_000))
    assert set(counts(floor)) == {("cartservice", "orders")}
    assert "8 edges with fewer than 1,000 calls in 7 d" in floor.problems[0].message


def test_the_window_and_the_clock_reach_prometheus(service_graph_prometheus: PrometheusServer) -> None:
    # 2.5 hours back from END holds the last four samples (3k .. 6k, 30 minutes apart): 3k x 2,100 / 1,800.
    recent = read(service_graph_prometheus, TraceOptions(window_seconds=9_000))
    assert counts(recent)[("checkoutservice", "cartservice")] == (350, 7)
    assert {c.window_seconds for c in recent.calls} == {9_000}
    # The last sample is two hours old: an hour's window sees no calls at all.
    assert read(service_graph_prometheus, TraceOptions(window_seconds=3_600)).observations == ()
    earlier = read_service_graph("sg", service_graph_prometheus.url, now=END - timedelta(hours=2, minutes=30))
    # 0 .. 3k, the last sample at the window's end: nothing to extrapolate.
    assert counts(earlier)[("checkoutservice", "cartservice")] == (300, 6)
    assert {c.last_seen for c in earlier.calls} == {END - timedelta(hours=2, minutes=30)}


def test_the_metric_prefix_names_the_series(service_graph_prometheus: PrometheusServer) -> None:
    polled = read(service_graph_prometheus, TraceOptions(metric_prefix=POLLED))
    assert counts(polled)[("checkoutservice", "cartservice")] == (1300, 26)
    assert read(service_graph_prometheus, TraceOptions(metric_prefix="absent_service_graph")).observations == ()


def test_a_few_hundred_series_are_read_in_one_answer(service_graph_prometheus: PrometheusServer) -> None:
    facts = read(service_graph_prometheus, TraceOptions(metric_prefix=MANY))
    assert len(facts.observations) == len(facts.calls) == MANY_EDGES
    assert set(counts(facts).values()) == {(130, 13)}


def test_a_prefix_that_is_no_metric_name_is_refused_naming_the_setting_before_any_request() -> None:
    with pytest.raises(ServiceGraphError, match="ONCALL_GRAPH_SERVICE_GRAPH_PREFIX"):
        read_service_graph("sg", "http://127.0.0.1:9", traces=TraceOptions(metric_prefix="traces-service graph"))
    with pytest.raises(ServiceGraphError, match="is not an http"):
        read_service_graph("sg", "prometheus:9090")


def test_a_path_prefix_is_kept_and_the_whole_endpoint_may_be_given() -> None:
    with fake_prometheus(SERIES, END, path_prefix="/prometheus") as mimir:
        base = mimir.url.removesuffix("/prometheus")
        assert mimir.url.endswith(":" + base.rsplit(":", 1)[1] + "/prometheus")
        for location in (mimir.url, mimir.url + "/", mimir.url + "/api/v1/query"):
            assert counts(read(mimir, location=location))[("cartservice", "orders")] == (1300, 0)
        with pytest.raises(
            ServiceGraphError,
            match="HTTP 404 Not Found: nothing answers as a Prometheus-compatible query API there; does the URL need a",
        ):
            read(mimir, location=base)


def test_the_token_and_the_tenant_are_sent_and_credentials_never_cited() -> None:
    with fake_prometheus(SERIES, END) as fake:
        source = f"service-graph:{fake.url}"
        tenant = TraceOptions(tenant="team-a")
        read_service_graph(source, fake.url, token=" s3cret\n", traces=tenant, now=END)
        assert fake.requests[-1]["Authorization"] == "Bearer s3cret"
        assert fake.requests[-1]["X-Scope-OrgID"] == "team-a"
        read_service_graph(source, fake.url, now=END)
        assert "Authorization" not in fake.requests[-1] and "X-Scope-OrgID" not in fake.requests[-1]

        with_user = fake.url.replace("http://", "http://reader:pa55@")
        facts = read_service_graph(source, with_user + "?dedup=true", now=END)
        assert fake.requests[-1]["Authorization"] == "Basic " + base64.b64encode(b"reader:pa55").decode()
        assert {o.citation.locator for o in facts.observations} == {f"service-graph {fake.url}"}


def test_the_registry_gives_the_kind_its_token_options_and_clock() -> None:
    with fake_prometheus(SERIES, END) as fake:
        access = SourceAccess(tokens={"service-graph": "t0ken"}, traces=TraceOptions(metric_prefix=POLLED))
        read = read_changed(SourceSpec("service-graph", fake.url), "", access, now=END)
        assert read is not None
        facts, version = read
        assert isinstance(facts, SourceFacts) and version == ""
        assert counts(facts)[("checkoutservice", "cartservice")] == (1300, 26)
        assert fake.requests[-1]["Authorization"] == "Bearer t0ken"


# --- what a failing API answers -------------------------------------------------------------------


def _error(kind: str, message: str) -> str:
    return json.dumps({"status": "error", "errorType": kind, "error": message})


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (400, _error("bad_data", 'invalid parameter "query": 1:5: parse error'),
         'HTTP 400 Bad Request: bad_data: invalid parameter "query": 1:5: parse error'),
        (422, _error("execution", "expanding series: too many samples"),
         "HTTP 422 Unprocessable Entity: execution: expanding series: too many samples"),
        (503, _error("timeout", "query timed out in expression evaluation"),
         "HTTP 503 Service Unavailable: timeout: query timed out in expression evaluation"),
        (200, _error("internal", "the store is down"), "HTTP 200 OK: internal: the store is down"),
        (401, "no org id\n", "HTTP 401 Unauthorized: the token was refused (ONCALL_GRAPH_SERVICE_GRAPH_TOKEN)"),
        (502, "<html>Bad Gateway</html>", "HTTP 502 Bad Gateway"),
        (200, "<html>Grafana</html>", "the answer is not JSON; is this a Prometheus-compatible query API?"),
        (200, json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}}),
         "expected a successful instant vector"),
    ],
)  # fmt: skip
def test_an_error_answer_fails_the_read_saying_what_the_api_said(status: int, body: str, said: str) -> None:
    with source_server() as server:
        server.serve("/api/v1/query", body, status=status)
        with pytest.raises(ServiceGraphError) as raised:
            read_service_graph("sg", server.url, now=END)
    assert said in str(raised.value)
    assert str(raised.value).startswith((f"GET {server.url}/api/v1/query: ", f"{server.url}: "))


def test_a_slow_or_huge_answer_fails_within_the_read_limits() -> None:
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}})
    with source_server() as server:
        server.serve("/api/v1/query", body, delay=1.0)
        with pytest.raises(FetchError, match="ReadTimeout"):
            read_service_graph("sg", server.url, timeout=0.2, now=END)
        server.serve("/api/v1/query", body + " " * 2_000)
        with reading_with(ReadLimits(max_file_bytes=1_000)), pytest.raises(FetchError, match="too big: 2,"):
            read_service_graph("sg", server.url, now=END)


def test_warnings_and_bad_series_are_problems_and_the_rest_is_kept() -> None:
    def series(value: object, **labels: str) -> dict[str, object]:
        return {"metric": labels, "value": [1.7e9, value]}

    body = {
        "status": "success",
        "warnings": ["partial response: store 10.0.0.7 unreachable"],
        "data": {"resultType": "vector", "result": [
            series("1000.4", client="a", server="b", oncall_graph_count="calls"),
            series("12.6", client="a", server="b", oncall_graph_count="failed"),
            series("50", server="b", oncall_graph_count="calls"),
            series("NaN", client="c", server="d", oncall_graph_count="calls"),
            series("lots", client="e", server="f", oncall_graph_count="calls"),
            series("5", client="g", server="h", oncall_graph_count="failed"),
            "not a series",
        ]},
    }  # fmt: skip
    facts = parse_service_graph("sg", "http://prom:9090", body, WEEK, END)

    assert counts(facts) == {("a", "b"): (1000, 13)}
    said = [(p.field, p.severity, p.message) for p in facts.problems]
    assert said == [
        ("warnings", "warning", "the server warned: 'partial response: store 10.0.0.7 unreachable'"),
        ("data.result[2]", "error", "a series without client and server labels: {'server': 'b'}"),
        ("data.result[3].value", "error", "not a count of calls: 'NaN'"),
        ("data.result[4].value", "error", "not a count of calls: 'lots'"),
        ("data.result[6]", "error", "not a series with metric and value; skipped"),
        ("data.result", "warning",
         "failed calls g -> h with no calls counted (is traces_service_graph_request_total there?)"),
    ]  # fmt: skip


def test_a_pair_seen_as_a_call_and_through_a_queue_is_one_call_edge() -> None:
    def calls(value: str, connection: str) -> dict[str, object]:
        labels = {"client": "checkout", "server": "accounting", "connection_type": connection}
        return {"metric": {**labels, "oncall_graph_count": "calls"}, "value": [1.7e9, value]}

    body = {"status": "success", "data": {"resultType": "vector", "result": [
        calls("400", "messaging_system"), calls("30", ""), calls("20", "virtual_node"),
    ]}}  # fmt: skip
    facts = parse_service_graph("sg", "http://prom:9090", body, WEEK, END)

    (observed,) = facts.observations
    assert observed.connection == "" and counts(facts) == {("checkout", "accounting"): (450, 0)}


def test_a_refused_token_is_named_and_a_long_error_cut_short() -> None:
    with source_server() as server:
        server.serve("/api/v1/query", _error("unauthorized", "no org id"), status=401)
        with pytest.raises(ServiceGraphError) as refused:
            read_service_graph("sg", server.url, now=END)
        server.serve("/api/v1/query", _error("execution", "x" * 5_000), status=422)
        with pytest.raises(ServiceGraphError) as long:
            read_service_graph("sg", server.url, now=END)
    assert str(refused.value).endswith(
        "HTTP 401 Unauthorized: the token was refused (ONCALL_GRAPH_SERVICE_GRAPH_TOKEN): unauthorized: no org id"
    )
    assert str(long.value).endswith("execution: " + "x" * 286 + "...")

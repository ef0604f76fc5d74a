"""The answers' look at the present (sync.live): one instant query to a real Prometheus, open incidents
from a PagerDuty REST API on a real socket, one read in flight shared by every answer, and a look that
never outlasts its deadline whatever the source does."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

from graph.traffic.live import LiveCall, LiveNow
from sync.live import LiveConfig, LiveFeed, SharedRead
from sync.sources.service_graph import service_graph_query
from sync.sources.trace_options import TraceOptions
from tests.fakes.pagerduty_api import TOKEN, incident, pagerduty_api
from tests.fakes.prometheus_server import PrometheusServer, fake_prometheus
from tests.fakes.troubled_api import closed_url, troubled_api
from tests.service_graph_series import END, LIVE, SERIES

LIVE_TRACES = TraceOptions(metric_prefix=LIVE)


def look(url: str, **config: object) -> LiveNow:
    settings = replace(LiveConfig(url, traces=LIVE_TRACES, deadline=2.0), **config)
    return LiveFeed(settings, lambda: END).begin()()


def test_a_look_reads_each_hops_calls_and_failures_over_the_last_five_minutes(
    service_graph_prometheus: PrometheusServer,
) -> None:
    now = look(service_graph_prometheus.url)
    reading = now.reading
    assert reading is not None and reading.error == "" and reading.at == END and reading.window == "5 min"
    assert set(reading.calls) == {
        LiveCall("cartservice", "orders", 1_000, 0),
        LiveCall("checkoutservice", "cartservice", 500, 60),
        LiveCall("checkoutservice", "payments", 200, 10),
        LiveCall("frontend", "checkoutservice", 500, 0),
        LiveCall("fraud-check", "cartservice", 250, 125),
        LiveCall("user", "frontend", 500, 250),
    }
    # Fifteen minutes earlier nothing was failing yet.
    earlier = LiveFeed(
        LiveConfig(service_graph_prometheus.url, traces=LIVE_TRACES), lambda: END - timedelta(minutes=15)
    )
    before = earlier.begin()().reading
    assert before is not None and before.calls and all(call.failed == 0 for call in before.calls)
    assert now.incidents_from == "" and now.incidents == ()


def test_the_query_is_the_sync_shape_over_the_live_window_with_the_sources_token_and_tenant() -> None:
    with fake_prometheus(SERIES, END) as fake:
        traces = TraceOptions(metric_prefix=LIVE, tenant="team-a")
        now = look(fake.url, traces=traces, window_seconds=120, service_graph_token="s3cret\n")
        assert now.reading is not None and now.reading.window == "2 min" and now.reading.calls
    [headers] = fake.requests
    assert headers["Authorization"] == "Bearer s3cret" and headers["X-Scope-OrgID"] == "team-a"
    assert service_graph_query(LIVE, 120).startswith("label_replace(sum by (client, server, connection_type)")


def test_a_slow_source_is_given_up_at_the_deadline_and_its_failure_serves_the_next_answers() -> None:
    with troubled_api(delay=3.0, body=b'{"status": "success", "data": {"resultType": "vector", "result": []}}') as api:
        feed = LiveFeed(LiveConfig(api.url, traces=LIVE_TRACES, deadline=0.3, cache_seconds=60), lambda: END)
        first = feed.begin()().reading
        assert first is not None and first.error == "no answer within 0.3 s" and first.at is None
        feed.settle()  # the read itself ends too: cut by its own timeout, the deadline
        later = feed.begin()().reading
    assert later is not None and "ReadTimeout" in later.error
    assert api.requests == 1 and feed.calls is not None and feed.calls.counts.cached == 1


def test_a_source_that_is_down_or_answers_garbage_or_nothing_says_why_in_the_reading(
    service_graph_prometheus: PrometheusServer,
) -> None:
    down = look(closed_url()).reading
    assert down is not None and "ConnectError" in down.error and down.source.startswith("127.0.0.1:")
    with troubled_api(body=b"<html>gateway</html>", status=200) as api:
        garbage = look(api.url).reading
        assert garbage is not None and "the answer is not JSON" in garbage.error
        api.body = b'{"status": "success", "data": {"resultType": "matrix", "result": []}}'
        shaped = look(api.url).reading
        assert shaped is not None and "expected a successful instant vector" in shaped.error
        api.status, api.body = 503, b'{"status": "error", "errorType": "unavailable", "error": "too many queries"}'
        refused = look(api.url).reading
        assert refused is not None and "HTTP 503" in refused.error and "too many queries" in refused.error
    empty = look(service_graph_prometheus.url, traces=TraceOptions(metric_prefix="absent_traces_service_graph"))
    assert empty.reading is not None and empty.reading.error == "no calls counted in the last 5 min"


def test_one_read_in_flight_serves_every_caller_and_a_fresh_result_is_kept_for_its_time() -> None:
    release, started = threading.Event(), threading.Event()
    reads: list[int] = []
    clock = [100.0]

    def read() -> int:
        reads.append(1)
        started.set()
        release.wait(10)
        return len(reads)

    shared = SharedRead(read, ttl=30, monotonic=lambda: clock[0])
    futures = [shared.get()]
    started.wait(10)
    futures += [shared.get() for _ in range(9)]
    release.set()
    assert {f.result(timeout=10) for f in futures} == {1}
    assert shared.get().result() == 1  # within 30 s: the same result
    clock[0] += 31
    assert shared.get().result(timeout=10) == 2
    counts = shared.counts
    assert (counts.reads, counts.joined, counts.cached, counts.asked) == (2, 9, 1, 12)


def test_open_incidents_are_read_page_by_page_while_pagerduty_says_there_are_more() -> None:
    listed = [
        incident(n, f"cart 5xx #{n}", "PCART", status="acknowledged" if n % 2 else "triggered") for n in range(1, 6)
    ]
    listed += [incident(6, "long gone", "PCART", status="resolved"), {"id": "QBROKEN", "status": "triggered"}]
    account = {"services": [], "business_services": [], "relationships": [], "incidents": listed}
    with pagerduty_api(account, page_size=2) as api:
        feed = LiveFeed(LiveConfig(pagerduty_token=TOKEN, pagerduty_url=api.url), lambda: END)
        now = feed.begin()()
        assert now.reading is None and now.incidents_error == ""
        assert now.incidents_from == api.url.removeprefix("http://")
        assert [(i.number, i.status, i.service_id) for i in now.incidents] == [
            (1, "acknowledged", "PCART"), (2, "triggered", "PCART"), (3, "acknowledged", "PCART"),
            (4, "triggered", "PCART"), (5, "acknowledged", "PCART"),
        ]  # fmt: skip
        assert now.incidents[0].url == "https://acme.pagerduty.com/incidents/Q0001INC"
        pages = [r for r in api.requests if r.path == "/incidents"]
        assert [r.query["offset"] for r in pages] == ["0", "2", "4"]  # six open (one broken), two a page
        assert all(r.lists["statuses[]"] == ["triggered", "acknowledged"] for r in pages)
        assert all(r.headers["Accept"] == "application/vnd.pagerduty+json;version=2" for r in pages)

        refused = LiveFeed(LiveConfig(pagerduty_token="wrong", pagerduty_url=api.url), lambda: END).begin()()
    assert refused.incidents == () and "the token was refused (PAGERDUTY_API_TOKEN)" in refused.incidents_error

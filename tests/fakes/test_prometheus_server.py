"""The fake Prometheus answers as the real one does: the same numbers, worked out by hand from
Prometheus' extrapolation, from the session's server (real where installed) and from the fake."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.fakes.prometheus_server import PrometheusServer, fake_prometheus, openmetrics
from tests.service_graph_series import END, EXTRAPOLATED, SERIES, Series

E = END.timestamp()
# The counter is 1,000 + 10 i, sampled every minute over the 30 minutes up to END (31 samples).
CASES = [
    # Ten minutes up to the last sample: eleven samples, both ends on a sample: 100.
    ("600s", E, "100"),
    # Half a minute earlier: ten samples, 30 s from each end (under 1.1 intervals): 90 x 600 / 540.
    ("600s", E - 30, "100"),
    # Three hours: every sample; the start is far, and the zero point (6,000 s back) farther than
    # half an interval: 300 x (1,800 + 30) / 1,800.
    ("10800s", E, "305"),
    # Past the end: nine samples from 480 s back, 20 s from the start, 500 s to the end: 80 x 530 / 480.
    ("1000s", E + 500, "88.33333333333334"),
    # A single sample in range: no increase at all.
    ("60s", E - 30, None),
]


@contextmanager
def fake() -> Iterator[PrometheusServer]:
    with fake_prometheus(SERIES, END) as server:
        yield server


def value(server: PrometheusServer, window: str, at: float) -> str | None:
    query = f"sum by (client, server, connection_type) (increase({EXTRAPOLATED}_total[{window}]))"
    answer = httpx.get(f"{server.url}/api/v1/query", params={"query": query, "time": at}, timeout=10).json()
    assert answer["status"] == "success" and answer["data"]["resultType"] == "vector"
    result = answer["data"]["result"]
    assert all(r["metric"] == {"client": "a", "server": "b"} and r["value"][0] == at for r in result)
    return result[0]["value"][1] if result else None


@pytest.mark.parametrize(("window", "at", "expected"), CASES)
def test_increase_extrapolates_as_prometheus_does(
    service_graph_prometheus: PrometheusServer, window: str, at: float, expected: str | None
) -> None:
    assert value(service_graph_prometheus, window, at) == expected
    with fake() as server:
        assert value(server, window, at) == expected


def test_the_fake_refuses_a_query_it_does_not_know_as_prometheus_refuses_a_bad_one() -> None:
    with fake() as server:
        answer = httpx.get(f"{server.url}/api/v1/query", params={"query": "up"}, timeout=10)
    assert answer.status_code == 400 and answer.json()["errorType"] == "bad_data"


def test_the_backfill_text_is_openmetrics_with_timestamps() -> None:
    series = [Series("x_request_total", (("client", "a"), ("server", "b")), ((60, 1.0), (0, 2.5)))]
    assert openmetrics(series, END) == (
        "# TYPE x_request counter\n"
        f'x_request_total{{client="a",server="b"}} 1 {E - 60:.3f}\n'
        f'x_request_total{{client="a",server="b"}} 2.5 {E:.3f}\n'
        "# EOF\n"
    )

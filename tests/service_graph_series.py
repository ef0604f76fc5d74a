"""The service-graph series the tests' Prometheus holds (a real server, or its fake), and what
`increase` makes of them, worked out by hand from Prometheus' documented extrapolation.

Every counter is sampled every 10 minutes from three hours to two hours before `END`, starting
at 0: over any window reaching back past its first sample, `increase` extrapolates to zero at the
start (a counter is never negative) and half a sample interval past the last sample, since the
window's end is far from it. Six steps of `k` over 3,600 s read as 6k x 3,900 / 3,600 = 6.5k calls,
whatever the clock says after `END` (within the window): the same numbers through the CLI's own
clock as at a pinned `now`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

# The end of the data: a whole minute, never in the future (the backfill writes only the past).
END = datetime.fromtimestamp(int(datetime.now(UTC).timestamp()) // 60 * 60, UTC)
PREFIX = "traces_service_graph"  # the default: Tempo's, Alloy's and the Collector's
POLLED = "polled_traces_service_graph"  # the same edges, a later poll: every count doubled
MANY = "many_traces_service_graph"  # a few hundred series, for the time one query takes
EXTRAPOLATED = "extrapolated_counter"  # counters that test the fake's arithmetic against Prometheus'
LIVE = "live_traces_service_graph"  # the last hour, failures on some edges in its last ten minutes
MANY_EDGES = 300


@dataclass(frozen=True, slots=True)
class Series:
    name: str  # the sample's name: `<prefix>_request_total`
    labels: tuple[tuple[str, str], ...]
    samples: tuple[tuple[int, float], ...]  # (seconds before END, value), oldest first


def hourly_counter(name: str, step: float, **labels: str) -> Series:
    """0, step, ... 6 step, every 10 minutes from END - 3 h to END - 2 h: reads as 6.5 step calls."""
    return Series(name, tuple(labels.items()), tuple((10_800 - 600 * i, step * i) for i in range(7)))


# (client, server, connection_type or None for no label, calls step, failed step): calls read 6.5 x step.
SHOP_EDGES = (
    ("frontend", "checkoutservice", None, 100, 2),  # 650 calls, 13 failed
    ("checkoutservice", "cartservice", None, 100, 2),  # 650 calls, 13 failed
    ("checkoutservice", "payments", "", 40, 0),  # 260 calls; an empty connection_type is no label
    ("cartservice", "orders", "database", 200, 0),  # 1,300 calls to a database alias
    ("checkoutservice", "accounting", "messaging_system", 20, 0),  # 130 messages: asynchronous
    ("user", "frontend", "virtual_node", 100, 0),  # traffic from outside: no dependency
    ("frontend", "external-payments-platform", "virtual_node", 20, 0),  # 130 calls to an unknown service
    ("checkoutservice", "checkoutservice", None, 20, 0),  # a self-loop: dropped
)
SHOP_CALLS = {(c, s): int(6.5 * step) for c, s, _, step, _ in SHOP_EDGES}


def _edge_series(prefix: str, scale: int) -> Iterator[Series]:
    for client, server, connection, step, failed in SHOP_EDGES:
        labels = {"client": client, "server": server}
        if connection is not None:
            labels["connection_type"] = connection
        yield hourly_counter(f"{prefix}_request_total", step * scale, **labels)
        if failed:
            yield hourly_counter(f"{prefix}_request_failed_total", failed * scale, **labels)
    # Seven calls over 30 minutes (6 x 2,100 / 1,800), at every poll: under the noise floor of 10.
    rare = ("client", "checkoutservice"), ("server", "rarely-called")
    yield Series(f"{prefix}_request_total", rare, tuple((9_000 - 600 * i, 2.0 * i) for i in range(4)))
    # A restart reset this counter: 0..300, then 50..250 reads as 550, x 3,900 / 3,600 = 595.8: 596 calls.
    reset = ("client", "payments"), ("server", "ledger")
    values = (0, 100, 200, 300, 50, 150, 250)
    yield Series(f"{prefix}_request_total", reset, tuple((10_800 - 600 * i, v * scale) for i, v in enumerate(values)))


def _many() -> Iterator[Series]:
    for n in range(MANY_EDGES):
        labels = {"client": f"service-{n:03d}", "server": f"service-{(n + 1) % MANY_EDGES:03d}"}
        yield hourly_counter(f"{MANY}_request_total", 20, **labels)  # 130 calls each
        yield hourly_counter(f"{MANY}_request_failed_total", 2, **labels)  # 13 failed each


def _extrapolated() -> Iterator[Series]:
    # 1,000 + 10 i every minute for the last 30 minutes, the last sample at END.
    minutes = tuple((1_800 - 60 * i, 1_000.0 + 10 * i) for i in range(31))
    yield Series(f"{EXTRAPOLATED}_total", (("client", "a"), ("server", "b")), minutes)


# (client, server, calls a minute, failed calls a minute over the last ten minutes; none before).
LIVE_EDGES = (
    ("checkoutservice", "cartservice", 100, 12),  # 12% failing now
    ("checkoutservice", "payments", 40, 2),  # 5% failing now
    ("frontend", "checkoutservice", 100, 0),  # calling without errors: not failing yet
    ("cartservice", "orders", 200, 0),
    ("fraud-check", "cartservice", 50, 25),  # 50% failing, seen only where fraud-check may be
    ("user", "frontend", 100, 50),  # traffic from outside: never marks anything
)


def _live() -> Iterator[Series]:
    """Sampled every minute over the last hour, the last sample at END. Over five minutes ending at
    END, `increase` reads exactly five minutes' steps (six samples spanning the window, or five and
    an extrapolation of one interval where the range is open on its left, as in Prometheus 3)."""
    for client, server, calls, failed in LIVE_EDGES:
        labels = (("client", client), ("server", server))
        minutes = range(61)
        yield Series(f"{LIVE}_request_total", labels, tuple((3_600 - 60 * m, float(calls * m)) for m in minutes))
        failures = tuple((3_600 - 60 * m, float(failed * max(0, m - 50))) for m in minutes)
        yield Series(f"{LIVE}_request_failed_total", labels, failures)


LIVE_SERIES: tuple[Series, ...] = tuple(_live())  # relative to any end: a server of their own ends them now
SERIES: tuple[Series, ...] = (
    *_edge_series(PREFIX, 1), *_edge_series(POLLED, 2), *_many(), *_extrapolated(), *LIVE_SERIES,
)  # fmt: skip

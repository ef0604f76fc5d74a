"""The present, read at answer time: the service graph's calls over the last few minutes and
PagerDuty's open incidents, for every answer that shows them beside the graph's prediction.

Each part is one request (the service graph's one instant query; the incidents' pages) under a
deadline of its own, its result shared by every answer for a short while (`SharedRead`): one read
in flight at a time, the others joining it. An answer begins the look before its walk and waits
for it after, never past the deadline counted from its start; a read that fails, times out or
finds nothing comes back as a reading with its `error`, which the answer shows in one line. The
requests carry settings only (the metric prefix, the window, the statuses), never a request's text.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Generic, TypeVar
from urllib.parse import urlsplit

from graph.observed import window_text
from graph.traffic.live import Incident, LiveCall, LiveNow, LiveReading
from sync.sources.pagerduty import DEFAULT_BASE_URL
from sync.sources.pagerduty_incidents import fetch_open_incidents
from sync.sources.reading.limits import ReadLimits, reading_with
from sync.sources.reading.textfiles import FetchError
from sync.sources.service_graph import counted_calls, query_service_graph
from sync.sources.trace_options import TraceOptions

log = logging.getLogger(__name__)
T = TypeVar("T")
Incidents = tuple[tuple[Incident, ...], str]  # (the open incidents, why none could be read)


@dataclass(frozen=True, slots=True)
class LiveConfig:
    """Where the present is read and how long an answer may wait for it."""

    service_graph: str = ""  # the service-graph source's URL; "" reads no calls
    service_graph_token: str = ""
    traces: TraceOptions = field(default_factory=TraceOptions)  # its prefix and tenant; the window is `window_seconds`
    window_seconds: int = 300  # ONCALL_GRAPH_LIVE_WINDOW
    deadline: float = 1.0  # ONCALL_GRAPH_LIVE_DEADLINE: seconds an answer waits, from its start
    cache_seconds: float = 30.0  # ONCALL_GRAPH_LIVE_CACHE: how long one reading serves every answer
    max_bytes: int = 10 * 1024 * 1024
    pagerduty_token: str = ""  # PAGERDUTY_API_TOKEN; "" asks for no incidents
    pagerduty_url: str = DEFAULT_BASE_URL

    @property
    def configured(self) -> bool:
        return bool(self.service_graph.strip() or self.pagerduty_token.strip())


@dataclass(slots=True)
class ReadCounts:
    """How answers were served: by a read of their own, by joining one in flight, or from the cache."""

    reads: int = 0
    joined: int = 0
    cached: int = 0

    @property
    def asked(self) -> int:
        return self.reads + self.joined + self.cached


class SharedRead(Generic[T]):
    """One read in flight at a time, its result kept `ttl` seconds for every caller (a failed read's
    too: a source that is down is not asked again by every answer)."""

    def __init__(self, read: Callable[[], T], ttl: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._read, self._ttl, self._monotonic = read, ttl, monotonic
        self._lock = threading.Lock()
        self._current: Future[T] | None = None
        self._finished = 0.0  # when the current read ended (monotonic)
        self.counts = ReadCounts()

    def get(self) -> Future[T]:
        """The current read's future: a fresh result, the read in flight, or a new read begun."""
        with self._lock:
            current = self._current
            if current is not None and not current.done():
                self.counts.joined += 1
                return current
            if current is not None and self._monotonic() - self._finished < self._ttl:
                self.counts.cached += 1
                return current
            future: Future[T] = Future()
            self._current = future
            self.counts.reads += 1
        threading.Thread(target=self._run, args=(future,), name="live-read", daemon=True).start()
        return future

    def settle(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the read in flight: a process must not exit under it (a
        daemon thread torn down in the middle of its request can crash the interpreter's exit)."""
        with self._lock:
            current = self._current
        if current is not None:
            wait([current], timeout=timeout)

    def _run(self, future: Future[T]) -> None:
        try:
            result = self._read()
        except Exception as exc:  # a bug in a reader: the answers still arrive, without the live part
            log.exception("live read failed")
            with self._lock:
                self._finished = self._monotonic()
            future.set_exception(exc)
            return
        with self._lock:  # before the result is set: a caller seeing it done sees it fresh
            self._finished = self._monotonic()
        future.set_result(result)


class LiveFeed:
    """The live port (`bot.query.live.LiveSource`): `begin()` starts or joins the shared reads and
    returns the wait for them, bounded by the deadline from the moment it began."""

    def __init__(
        self,
        config: LiveConfig,
        clock: Callable[[], datetime],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config, self._clock, self._monotonic = config, clock, monotonic
        self.source = shown_host(config.service_graph) if config.service_graph.strip() else ""
        self.incidents_from = shown_host(config.pagerduty_url) if config.pagerduty_token.strip() else ""
        ttl = config.cache_seconds
        self.calls = SharedRead(self._read_calls, ttl, monotonic) if self.source else None
        self.incidents = SharedRead(self._read_incidents, ttl, monotonic) if self.incidents_from else None

    def begin(self) -> Callable[[], LiveNow]:
        began = self._monotonic()
        calls = self.calls.get() if self.calls else None
        incidents = self.incidents.get() if self.incidents else None

        def wait() -> LiveNow:
            reading = None
            if calls is not None:
                got = self._within(calls, began)
                reading = got if isinstance(got, LiveReading) else self._reading(error=got)
            found: Incidents = ((), "")
            if incidents is not None:
                listed = self._within(incidents, began)
                found = listed if isinstance(listed, tuple) else ((), listed)
            return LiveNow(reading, found[0], self.incidents_from, found[1])

        return wait

    def settle(self) -> None:
        """Before the process exits: the reads in flight end (each within the deadline)."""
        for shared in (self.calls, self.incidents):
            if shared is not None:
                shared.settle(self.config.deadline + 1.0)

    def _within(self, future: Future[T], began: float) -> T | str:
        """The read's result, or why there is none: not within the deadline counted from `began`."""
        left = max(0.0, began + self.config.deadline - self._monotonic())
        try:
            return future.result(timeout=left)
        except FutureTimeout:
            return f"no answer within {self.config.deadline:g} s"
        except Exception as exc:  # noqa: BLE001 - a reader's bug, logged by the read
            return f"the read failed ({type(exc).__name__})"

    def _reading(self, *, at: datetime | None = None, calls: tuple[LiveCall, ...] = (), error: str = "") -> LiveReading:
        """A reading; one with an `error` has no time: nothing it shows is from any moment."""
        return LiveReading(self.source, at, self.config.window_seconds, calls, error)

    def _read_calls(self) -> LiveReading:
        config, at = self.config, self._clock()
        traces = replace(config.traces, window_seconds=config.window_seconds)
        try:
            with reading_with(ReadLimits(config.max_bytes, config.deadline)):
                body = query_service_graph(
                    config.service_graph, token=config.service_graph_token, timeout=config.deadline, traces=traces,
                    at=at,
                )  # fmt: skip
                counted, _ = counted_calls(self.source, body, traces.metric_prefix)
        except FetchError as exc:
            log.warning("live calls not read from %s: %s", self.source, exc)
            return self._reading(error=str(exc))
        summed: dict[tuple[str, str], tuple[int, int]] = {}
        for call in counted:  # one hop whatever the connection type
            calls, failed = summed.get((call.client, call.server), (0, 0))
            summed[(call.client, call.server)] = (calls + call.calls, failed + call.failed)
        if not any(calls for calls, _ in summed.values()):
            return self._reading(error=f"no calls counted in the last {window_text(config.window_seconds)}")
        found = tuple(LiveCall(c, s, calls, failed) for (c, s), (calls, failed) in sorted(summed.items()) if calls)
        return self._reading(at=at, calls=found)

    def _read_incidents(self) -> Incidents:
        config = self.config
        try:
            with reading_with(ReadLimits(config.max_bytes, config.deadline)):
                found = fetch_open_incidents(
                    config.pagerduty_url, token=config.pagerduty_token, timeout=config.deadline
                )
        except FetchError as exc:
            log.warning("open incidents not read from %s: %s", self.incidents_from, exc)
            return (), str(exc)
        return found, ""


def shown_host(url: str) -> str:
    """`prometheus:9090`, `mimir:8080/prometheus`: where a live part came from, as a line cites it
    (never its credentials or query)."""
    parts = urlsplit(url.strip())
    host = parts.hostname or url.strip()
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return host + parts.path.rstrip("/")

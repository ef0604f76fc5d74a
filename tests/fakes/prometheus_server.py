"""A Prometheus holding given counter series, for the service-graph reader's tests.

The real one where it is installed (Debian's `prometheus` package, which `.ci/run` installs): the
series written as OpenMetrics with timestamps, backfilled with `promtool tsdb create-blocks-from
openmetrics`, and the server started on that data directory on a free loopback port. Elsewhere
(`make test` needs no system package), a fake answering the documented `GET /api/v1/query` over a
real socket, evaluating the reader's query shape over the same series as Prometheus 2.x does:
`increase` over a closed range `[t - range, t]`, counter resets, extrapolation to the range's ends
(`extrapolatedRate` in promql/functions.go), `sum by`, `label_replace` of an empty source and `or`.
`ONCALL_GRAPH_TEST_PROMETHEUS=fake` runs the fake where the real one is installed.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.fakes.postgres_server import _free_port
from tests.fakes.serving import send, serving
from tests.service_graph_series import Series

ENV_BACKEND = "ONCALL_GRAPH_TEST_PROMETHEUS"
READY_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class PrometheusBinaries:
    prometheus: Path
    promtool: Path
    version: str  # `prometheus --version`'s first line

    @property
    def origin(self) -> str:
        found = re.search(r"version (\d+\.\d+)", self.version)
        number = found.group(1) if found else "of unknown version"
        debian = "debian" in self.version.lower() or "+ds" in self.version
        name = "Debian's prometheus" if debian else "prometheus"
        return f"{name} {number} ({self.prometheus})"


@cache
def find_prometheus() -> PrometheusBinaries | None:
    """Prometheus and promtool on the PATH, unless the tests are told to use the fake."""
    if os.environ.get(ENV_BACKEND, "").strip().lower() == "fake":
        return None
    server, tool = shutil.which("prometheus"), shutil.which("promtool")
    if server is None or tool is None:
        return None
    done = subprocess.run([server, "--version"], capture_output=True, text=True, timeout=30, check=False)
    first = (done.stdout or done.stderr).splitlines()
    return PrometheusBinaries(Path(server), Path(tool), first[0] if first else "")


def describe_backend() -> str:
    """Which Prometheus the service-graph tests run against, for the test report's last lines."""
    found = find_prometheus()
    if found is not None:
        return f"Prometheus: {found.origin}"
    why = f"{ENV_BACKEND}=fake" if os.environ.get(ENV_BACKEND) else "no prometheus and promtool installed"
    return f"Prometheus: a fake answering /api/v1/query over the same series ({why})"


@dataclass
class PrometheusServer:
    url: str
    origin: str
    requests: list[dict[str, str]] = field(default_factory=list)  # the fake's: each request's headers


@contextmanager
def prometheus(series: Sequence[Series], end: datetime) -> Iterator[PrometheusServer]:
    """The real Prometheus when installed, else the fake, holding `series` ending at `end`."""
    found = find_prometheus()
    if found is None:
        with fake_prometheus(series, end) as fake:
            yield fake
        return
    with real_prometheus(found, series, end) as url:
        yield PrometheusServer(url, found.origin)


# --- the real server -----------------------------------------------------------------------------


def openmetrics(series: Iterable[Series], end: datetime) -> str:
    """OpenMetrics text with timestamps: each counter family's samples together, then `# EOF`."""
    families: dict[str, list[str]] = {}
    stamp = end.timestamp()
    for s in series:
        family = s.name.removesuffix("_total")
        labels = ",".join(f'{k}="{v}"' for k, v in s.labels)
        lines = families.setdefault(family, [f"# TYPE {family} counter"])
        lines += [f"{s.name}{{{labels}}} {value:g} {stamp - ago:.3f}" for ago, value in s.samples]
    return "".join(f"{line}\n" for lines in families.values() for line in lines) + "# EOF\n"


@contextmanager
def real_prometheus(binaries: PrometheusBinaries, series: Sequence[Series], end: datetime) -> Iterator[str]:
    """Yields `http://127.0.0.1:PORT` of a Prometheus serving the backfilled series; stops it after."""
    home = Path(tempfile.mkdtemp(prefix="oncall-prometheus-"))
    data, port = home / "data", _free_port()
    (home / "series.om").write_text(openmetrics(series, end))
    (home / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    backfill = [str(binaries.promtool), "tsdb", "create-blocks-from", "openmetrics", "--quiet"]
    done = subprocess.run([*backfill, str(home / "series.om"), str(data)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        raise RuntimeError(f"promtool backfill failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    command = [
        str(binaries.prometheus),
        f"--config.file={home / 'prometheus.yml'}",
        f"--storage.tsdb.path={data}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--storage.tsdb.retention.time=100y",  # backfilled samples are never too old to query
    ]
    with (home / "log").open("wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=home)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(server, url, home / "log")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(home, ignore_errors=True)


def _wait_ready(server: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"prometheus exited with {server.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"prometheus not ready within {READY_SECONDS:g} s: {log.read_text(errors='replace')[-2000:]}")


# --- the fake ------------------------------------------------------------------------------------

_SUMMED = re.compile(r"^sum by \(([\w, ]+)\) \(increase\(([a-zA-Z_:][\w:]*)\[(\d+)s\]\)\)$")
_LABELLED = re.compile(r'^label_replace\((.*), "(\w+)", "([^"]*)", "", ""\)$')
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _Term:
    metric: str
    seconds: int
    by: tuple[str, ...]
    added: tuple[str, str] | None  # the label label_replace sets


def _terms(query: str) -> list[_Term] | None:
    """The query as `or`-ed terms of the reader's shape, or None when it is any other query."""
    terms = []
    for text in query.split(" or "):
        labelled = _LABELLED.match(text.strip())
        summed = _SUMMED.match(labelled.group(1) if labelled else text.strip())
        if summed is None:
            return None
        by, metric, seconds = summed.groups()
        added = (labelled.group(2), labelled.group(3)) if labelled else None
        terms.append(_Term(metric, int(seconds), tuple(b.strip() for b in by.split(",")), added))
    return terms


def increase(samples: Sequence[tuple[float, float]], start: float, end: float) -> float | None:
    """Prometheus 2.x `increase` over the samples in [start, end] (seconds), or None under two samples."""
    points = [(t, v) for t, v in samples if start <= t <= end]
    if len(points) < 2:
        return None
    result = points[-1][1] - points[0][1]
    last = 0.0
    for _, value in points:
        if value < last:
            result += last
        last = value
    to_start, to_end = points[0][0] - start, end - points[-1][0]
    sampled = points[-1][0] - points[0][0]
    average = sampled / (len(points) - 1)
    if result > 0 and points[0][1] >= 0:
        to_start = min(to_start, sampled * (points[0][1] / result))  # never extrapolate below zero
    threshold = average * 1.1
    interval = sampled + (to_start if to_start < threshold else average / 2)
    interval += to_end if to_end < threshold else average / 2
    return result * (interval / sampled)


def evaluate(series: Sequence[Series], end: datetime, query: str, at: float) -> list[dict[str, object]] | None:
    """The instant vector `query` gives at `at`, as Prometheus' JSON result; None for another query."""
    terms = _terms(query)
    if terms is None:
        return None
    out: dict[Labels, float] = {}
    for term in terms:
        sums: dict[Labels, float] = {}
        for s in series:
            if s.name != term.metric:
                continue
            samples = [(end.timestamp() - ago, value) for ago, value in s.samples]
            found = increase(samples, at - term.seconds, at)
            if found is None:
                continue
            labels = dict(s.labels)
            group = tuple((k, labels[k]) for k in sorted(term.by) if labels.get(k))
            sums[group] = sums.get(group, 0.0) + found
        for group, value in sums.items():
            labels = dict(group)
            if term.added is not None and term.added[1]:
                labels[term.added[0]] = term.added[1]
            key = tuple(sorted(labels.items()))
            out.setdefault(key, value)  # `or`: the left side's series win
    return [{"metric": dict(k), "value": [at, _go_float(v)]} for k, v in out.items()]


def _go_float(value: float) -> str:
    """As Go's strconv.FormatFloat(v, 'f', -1, 64) writes it: `650`, `649.9999999999999`, `NaN`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if value.is_integer() else repr(value)


@contextmanager
def fake_prometheus(series: Sequence[Series], end: datetime, *, path_prefix: str = "") -> Iterator[PrometheusServer]:
    """The fake on a real socket; `path_prefix` mounts the API under a path, as Mimir's `/prometheus`."""
    state = PrometheusServer("", "a fake answering /api/v1/query")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            state.requests.append(dict(self.headers.items()))
            if parts.path != f"{path_prefix}/api/v1/query":
                send(self, 404, b"404 page not found\n", "text/plain", {})
                return
            params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            at = float(params.get("time", time.time()))
            result = evaluate(series, end, params.get("query", ""), at)
            if result is None:
                error = {"status": "error", "errorType": "bad_data", "error": "the fake knows only the reader's query"}
                send(self, 400, json.dumps(error).encode(), "application/json", {})
                return
            body = {"status": "success", "data": {"resultType": "vector", "result": result}}
            send(self, 200, json.dumps(body).encode(), "application/json", {})

        def log_message(self, format: str, *args: object) -> None:
            return None

    with serving(Handler) as url:
        state.url = url + path_prefix
        yield state

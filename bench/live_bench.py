"""Live-data benchmark: the same answers with the live part and without it, and how well one reading
serves 50 answers at once, with a real Prometheus on this machine.

    python -m bench.live_bench            layered-10k and layered-100k
    python -m bench.live_bench --quick    layered-10k only

Each scenario's catalog is synced into SQLite (the command line), loaded and warmed in this process
as the bot serves it. Prometheus (the real one when installed, else the tests' fake on a socket)
holds service-graph counters for the hops the answers show and as many elsewhere, over the last
fifteen minutes, a fifth of them failing. The answers are what a Slack reply computes:
`/blast-radius` on the hub (`answer_blast` and its Block Kit, in the bot's work slots) and `/suspects`
on the leaf, each run without the live part, with it from the cache (the usual case: one reading
serves every answer for 30 s), and with no cache (every answer sends the query: its full cost),
interleaved. Then 50 answers start at once on a cold cache: how many were served by one read,
joined in flight or cached, how many queries Prometheus itself counted, and how long the 50 took
beside the same 50 without the live part.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from bench.generate import OUT
from bench.measure import summary_ms
from bench.sync_bench import scenario_names, synced_sqlite
from bot.query.blast import answer_blast, answer_suspects
from bot.query.bundle import BlastQuery, SuspectsQuery
from bot.query.live import LiveSource
from bot.slack.answer_slots import AnswerSlots
from bot.slack.blocks.messages import SlackMessage, format_blast_radius, format_suspects
from bot.wiring import snapshot_ref
from graph.exposure.visibility import EVERYONE
from graph.health.freshness import StalePolicy
from graph.naming.refs import short_name
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius
from sync.live import LiveConfig, LiveFeed
from sync.refresh import load_snapshot
from sync.sources.trace_options import TraceOptions
from sync.store.database import make_engine
from sync.store.fact_store import Store
from tests.fakes.prometheus_server import PrometheusServer, prometheus
from tests.service_graph_series import Series

PREFIX = "bench_traces_service_graph"
SHOWN_HOPS = 300  # hops of the hub's nearest impacted entities: what the replies mark
ELSEWHERE = 300  # hops the answers do not show: a reading is of the whole service graph
FAILING_EVERY = 5
RUNS = 30
CONCURRENT = 50
POLICY = StalePolicy(interval=3600)
Answer = Callable[[LiveSource | None], SlackMessage]


def edges_of(snapshot: Snapshot, hub: str) -> list[tuple[str, str]]:
    """(client, server) names: the own hops of the hub's nearest impacted entities, then others."""
    shown = [i.edges[-1] for i in blast_radius(snapshot, hub).nearest(SHOWN_HOPS) if i.edges]
    pairs = [(short_name(e.src), short_name(e.dst)) for e in shown]
    seen = set(pairs)
    for edges in snapshot.out_edges.values():
        for e in edges:
            pair = (short_name(e.src), short_name(e.dst))
            if len(pairs) >= SHOWN_HOPS + ELSEWHERE:
                return pairs
            if pair not in seen and e.rel == "depends_on":
                seen.add(pair)
                pairs.append(pair)
    return pairs


def series_of(pairs: Sequence[tuple[str, str]]) -> list[Series]:
    """A sample a minute over the last fifteen minutes: 100 calls a minute, every fifth hop failing 20."""
    found = []
    for n, (client, server) in enumerate(pairs):
        labels = (("client", client), ("server", server))
        failed = 20 if n % FAILING_EVERY == 0 else 0
        found.append(Series(f"{PREFIX}_request_total", labels, tuple((900 - 60 * m, 100.0 * m) for m in range(16))))
        found.append(
            Series(
                f"{PREFIX}_request_failed_total", labels, tuple((900 - 60 * m, float(failed * m)) for m in range(16))
            )
        )
    return found


def served(db: str) -> Snapshot:
    store = Store(make_engine(db))
    snapshot = load_snapshot(store, lambda: datetime.now(UTC))
    assert snapshot is not None, db
    ref = snapshot_ref()
    ref.swap(snapshot)  # warmed and frozen, as the bot serves it
    current = ref.current()
    assert current is not None
    return current


def answers(snapshot: Snapshot, hub: str, leaf: str, end: datetime) -> dict[str, Answer]:
    """The two replies as the bot computes them: the walk and the rendering in its work slots (two,
    the machine's cores), the wait for the live part in none."""
    slots = AnswerSlots()

    def blast(live: LiveSource | None) -> SlackMessage:
        bundle = answer_blast(snapshot, BlastQuery(hub), EVERYONE, end, POLICY, live, cpu=slots)
        assert bundle.result is not None
        with slots:
            return format_blast_radius(bundle.result, bundle.freshness, passages=bundle.passages, live=bundle.live)

    def suspects(live: LiveSource | None) -> SlackMessage:
        bundle = answer_suspects(snapshot, SuspectsQuery(leaf), EVERYONE, end, POLICY, live, cpu=slots)
        assert bundle.result is not None
        with slots:
            return format_suspects(bundle.result, bundle.freshness, passages=bundle.passages, live=bundle.live)

    return {"blast_hub": blast, "suspects_leaf": suspects}


def feed(server: PrometheusServer, end: datetime, cache: float) -> LiveFeed:
    config = LiveConfig(server.url, traces=TraceOptions(metric_prefix=PREFIX), cache_seconds=cache)
    return LiveFeed(config, lambda: end)


def timed(answer: Answer, live: LiveSource | None) -> tuple[float, SlackMessage]:
    began = time.perf_counter()
    message = answer(live)
    return time.perf_counter() - began, message


def compare(answer: Answer, server: PrometheusServer, end: datetime) -> dict[str, Any]:
    """p50/p99 without the live part, with it cached, and with every answer reading, interleaved."""
    cached, uncached = feed(server, end, 30.0), feed(server, end, 0.0)
    modes: dict[str, LiveSource | None] = {"without": None, "cached": cached, "uncached": uncached}
    for live in modes.values():
        timed(answer, live)  # warm: the first reading, the first paths
    samples: dict[str, list[float]] = {mode: [] for mode in modes}
    for _ in range(RUNS):
        for mode, live in modes.items():
            samples[mode].append(timed(answer, live)[0])
    said = timed(answer, cached)[1]
    marked = sum(1 for b in said.blocks if "🔴" in json.dumps(b, ensure_ascii=False))
    figures: dict[str, Any] = {mode: summary_ms(found) for mode, found in samples.items()}
    figures["marked_blocks"] = marked
    figures["cited"] = next((b for b in said.blocks if "live:" in json.dumps(b, ensure_ascii=False)), None) is not None
    return figures


def query_count(server: PrometheusServer) -> int | None:
    """Instant queries Prometheus counted (its own /metrics); None for the fake, which counts none."""
    try:
        with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    found = re.findall(r'prometheus_http_requests_total\{code="200",handler="/api/v1/query"\} (\d+)', text)
    return sum(int(n) for n in found) if found else 0


def at_once(answer: Answer, live: LiveSource | None) -> list[float]:
    """Seconds each of 50 answers took, all started together."""
    start = threading.Barrier(CONCURRENT)

    def one(_: int) -> float:
        start.wait()
        return timed(answer, live)[0]

    with ThreadPoolExecutor(max_workers=CONCURRENT) as pool:
        return list(pool.map(one, range(CONCURRENT)))


def burst(answer: Answer, server: PrometheusServer, end: datetime) -> dict[str, Any]:
    """50 answers at once on a cold cache: one read serves them (joined in flight, then cached);
    beside the same 50 without the live part."""
    without = at_once(answer, None)
    live = feed(server, end, 30.0)
    before = query_count(server)
    seconds = at_once(answer, live)
    after = query_count(server)
    assert live.calls is not None
    counts = live.calls.counts
    return {
        "answers": counts.asked,
        "reads": counts.reads,
        "joined_in_flight": counts.joined,
        "cached": counts.cached,
        "hit_rate": round((counts.joined + counts.cached) / counts.asked, 3),
        "prometheus_queries": None if before is None or after is None else after - before,
        "answered": summary_ms(seconds),
        "answered_without": summary_ms(without),
    }


def main(argv: Sequence[str] | None = None) -> None:
    names = scenario_names(argv, __doc__ or "")
    results: dict[str, Any] = {}
    for name, catalog, db, _ in synced_sqlite(names):
        snapshot = served(db)
        end = datetime.fromtimestamp(int(datetime.now(UTC).timestamp()) // 60 * 60, UTC)
        pairs = edges_of(snapshot, catalog.hub)
        with prometheus(series_of(pairs), end) as server:
            figures: dict[str, Any] = {"prometheus": server.origin, "hops_in_reading": len(pairs)}
            for label, answer in answers(snapshot, catalog.hub, catalog.leaf, end).items():
                figures[label] = compare(answer, server, end)
            figures["burst_50"] = burst(answers(snapshot, catalog.hub, catalog.leaf, end)["blast_hub"], server, end)
        results[name] = figures
        for label in ("blast_hub", "suspects_leaf"):
            f = figures[label]
            print(
                f"{name:>13} {label:>13}: without p50 {f['without']['p50']:6.1f} p99 {f['without']['p99']:6.1f} ms"
                f" · live cached p50 {f['cached']['p50']:6.1f} p99 {f['cached']['p99']:6.1f} ms"
                f" · live uncached p50 {f['uncached']['p50']:6.1f} p99 {f['uncached']['p99']:6.1f} ms"
            )
        b = figures["burst_50"]
        print(
            f"{name:>13} 50 at once: {b['reads']} read, {b['joined_in_flight']} joined in flight, {b['cached']} cached"
            f" (hit rate {b['hit_rate']:.0%}; Prometheus counted {b['prometheus_queries']} queries);"
            f" answered p50 {b['answered']['p50']:.0f} ms p99 {b['answered']['p99']:.0f} ms"
            f" (without: p50 {b['answered_without']['p50']:.0f} ms p99 {b['answered_without']['p99']:.0f} ms)"
        )
    OUT.mkdir(exist_ok=True)
    (OUT / "live_results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

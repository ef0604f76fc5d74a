"""Observed calls at scale: a generated catalog and twice as many observed edges as entities, synced,
polled again with new counts, and answered from.

    python -m bench.observed_bench            layered-100k with 200k observed edges
    python -m bench.observed_bench --quick    layered-10k with 20k

Each scenario runs in a fresh process (its peak RSS is its own) on a throwaway SQLite file. The
catalog is read by its real reader; the traffic is made up here (`traffic`) and turned into facts
by the function every trace reader ends with (`sync.sources.trace_calls.observed_facts`), then
handed to the real sync (`sync.refresh.apply_reads`: decide, store, build, warm, swap) as a
`service-graph` source's read. No HTTP: a Prometheus answer of 200k series is not what is measured.

- sync cold: an empty database, the catalog and the traces in one sync, up to the warmed snapshot;
- sync unchanged: the next poll, the same edges with new counts: it must not rebuild (the counts
  join the built graph through `Snapshot.with_marks`), and the answers must show the new counts;
- builds from the store, with and without the trace source: what the observed edges add;
- blast radius at the hub (`answer_blast` and the Slack message it renders) and at a leaf (the
  empty answer that says how much the graph can know); `drift`, and `drift` as the JSON the CLI
  and MCP send.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.generate import OUT, SCENARIOS, Layout, ensure_catalog, layout
from bench.measure import repeat, status_mb, summary_ms
from bench.sync_bench import scratch_folder
from bot.query.blast import answer_blast
from bot.query.bundle import BlastQuery
from bot.render.json import drift_json
from bot.slack.blocks.blast import format_blast_radius
from bot.wiring import open_store, snapshot_ref
from graph.exposure.visibility import EVERYONE
from graph.health.freshness import StalePolicy
from graph.observed import MESSAGING
from graph.snapshot import Snapshot
from graph.traffic.drift import drift
from sync.read_isolation import SourceRead
from sync.refresh import SyncReport, apply_reads, load_snapshot, read_sources
from sync.sources.registry import SourceSpec
from sync.sources.trace_calls import CountedCall, observed_facts
from sync.sources.trace_options import TraceOptions
from sync.store.fact_store import Store

ROOT = Path(__file__).resolve().parent.parent
SERVICE_GRAPH = "http://prometheus.bench.invalid:9090"  # the trace source's name; never reached
EDGES = {"layered-10k": 20_000, "layered-100k": 200_000}
QUICK, FULL = ("layered-10k",), ("layered-100k",)
SEED = 20261206
# The traffic's shares: calls that corroborate a declared dependency, messages through queues,
# calls to or from names no entity answers to, calls from outside (`user`); the rest are calls no
# catalog declares, mostly down the layers, to datastores and hubs.
CORROBORATED, MESSAGING_SHARE, UNKNOWN_SHARE, VIRTUAL_SHARE = 0.2, 0.05, 0.05, 0.01
UNKNOWN_NAMES = 0.015  # distinct unknown names, per observed edge
SELF_LOOPS, NOISE = 0.001, 0.005  # dropped by the reader: counted in its note, not among the edges


@dataclass(frozen=True, slots=True)
class Traffic:
    calls: tuple[CountedCall, ...]
    shares: dict[str, int]


def traffic(found: Layout, edges: int, rng: random.Random) -> Traffic:
    """`edges` distinct (client, server) pairs with counts, as telemetry names them (entity names
    here), plus a few self-loops and edges under the noise floor for the reader to drop."""
    layers, last = found.layers, len(found.layers) - 1
    services = [name for layer in layers for name in layer]
    unknown = max(10, int(edges * UNKNOWN_NAMES))
    pairs: dict[tuple[str, str], str] = {}

    def downward() -> tuple[str, str]:
        layer = rng.randrange(last)
        client = rng.choice(layers[layer])
        roll = rng.random()
        if roll < 0.03:
            return client, rng.choice(found.hubs)
        if roll < 0.3:
            return client, rng.choice(found.stores)
        return client, rng.choice(layers[rng.randint(layer + 1, last)])

    def unknown_side() -> tuple[str, str]:
        name = f"ext-partner-{rng.randrange(unknown)}"
        return (name, rng.choice(services)) if rng.random() < 0.2 else (rng.choice(services), name)

    makers: list[tuple[float, str, Callable[[], tuple[str, str]]]] = [
        (CORROBORATED, "corroborated", lambda: rng.choice(found.declared)),
        (MESSAGING_SHARE, "messaging", lambda: (rng.choice(services), rng.choice(services))),
        (UNKNOWN_SHARE, "unknown", unknown_side),
        (VIRTUAL_SHARE, "virtual", lambda: ("user", rng.choice(layers[0]))),
    ]
    for share, kind, make in makers:
        target = len(pairs) + int(edges * share)
        while len(pairs) < target:
            pair = make()
            if pair[0] != pair[1]:
                pairs.setdefault(pair, kind)
    while len(pairs) < edges:
        pair = downward()
        pairs.setdefault(pair, "undeclared")
    made = [
        CountedCall(
            c,
            s,
            calls := int(10 ** rng.uniform(1, 5)),
            int(calls * rng.choice((0, 0, 0, 0.001, 0.02))),
            MESSAGING if kind == "messaging" else "",
        )  # fmt: skip
        for (c, s), kind in pairs.items()
    ]
    made += [CountedCall(s, s, 500) for s in rng.sample(services, int(edges * SELF_LOOPS))]
    made += [CountedCall(rng.choice(services), f"rare-{i}", rng.randint(1, 9)) for i in range(int(edges * NOISE))]
    shares: dict[str, int] = {}
    for kind in pairs.values():
        shares[kind] = shares.get(kind, 0) + 1
    return Traffic(tuple(made), shares)


def polled_again(found: Traffic, rng: random.Random) -> Traffic:
    """The same edges a poll later: every count moved, nothing added or gone (noise stays noise)."""
    floor = TraceOptions().min_calls
    moved = (replace(c, calls=c.calls + rng.randint(1, 50)) if c.calls >= floor else c for c in found.calls)
    return replace(found, calls=tuple(moved))


def clock() -> datetime:
    return datetime.now(UTC)


def sync(
    store: Store, ref: Any, catalog: SourceSpec, traces: SourceSpec, found: Traffic
) -> tuple[SyncReport, dict[str, float]]:
    """One sync of both sources, the catalog read by its reader and the traffic by `observed_facts`:
    (the report, seconds by step)."""
    began = time.perf_counter()
    reads = read_sources([catalog], store, clock)  # the catalog: parsed, or unchanged since the last sync
    read_catalog = time.perf_counter() - began
    now = clock()
    timer = time.perf_counter()
    facts = observed_facts(traces.name, traces.kind, traces.location, found.calls, TraceOptions(), now)
    trace_facts = time.perf_counter() - timer
    store.ensure_source(traces.name, traces.kind, traces.location)
    reads[traces.name] = SourceRead((facts, ""), now, trace_facts)
    timer = time.perf_counter()
    report = apply_reads([catalog, traces], reads, store, ref, clock)
    applied = time.perf_counter() - timer
    stored = sum(o.seconds for o in report.outcomes) - read_catalog - trace_facts
    steps = {
        "total": time.perf_counter() - began,
        "catalog_read": read_catalog,
        "trace_facts": trace_facts,
        "store": stored,
        "build_and_warm": applied - stored,
    }
    return report, {k: round(v, 3) for k, v in steps.items()}


def measure_scenario(name: str, runs: int) -> dict[str, Any]:
    scenario = SCENARIOS[name]
    catalog = ensure_catalog(scenario)
    rng = random.Random(SEED)
    found = traffic(layout(scenario), EDGES[name], rng)
    catalog_spec, traces = SourceSpec("catalog", str(catalog.folder)), SourceSpec("service-graph", SERVICE_GRAPH)
    load_average = os.getloadavg()[0]
    with scratch_folder() as scratch:
        store = open_store(f"sqlite:///{scratch / 'observed.db'}")
        ref = snapshot_ref()
        cold_report, cold = sync(store, ref, catalog_spec, traces, found)
        _progress(f"{name}: cold sync {cold['total']:.1f} s")
        built = ref.current()
        assert built is not None and cold_report.update is not None
        polls = []
        for _ in range(3):
            report, steps = sync(store, ref, catalog_spec, traces, (found := polled_again(found, rng)))
            served = ref.current()
            assert served is not None
            moved = [o.name for o in report.outcomes if o.added or o.retired]
            polls.append({**steps, "rebuilt": report.update is not None, "sources_moved": moved,
                          "version_moved": report.version != cold_report.version,
                          "indexes_kept": served.derived is built.derived,
                          "counts_shown": _counts_shown(served, found)})  # fmt: skip
        _progress(f"{name}: unchanged polls {', '.join(str(p['total']) for p in polls)} s")
        snapshot = ref.current()
        assert snapshot is not None
        shape = _shape(snapshot, found)
        answers = _answers(snapshot, catalog.hub, catalog.leaf, runs)
        peak = status_mb("VmHWM")
        builds = {
            "with_traces": _timed_build(store, [catalog_spec.name, traces.name]),
            "catalog_only": _timed_build(store, [catalog_spec.name]),
        }
    return {"edges": EDGES[name], "traffic": found.shares, "graph": shape, "cold_sync": cold,
            "unchanged_polls": polls, "builds_from_store": builds, "answers": answers, "peak_rss_mb": peak,
            "load_average": load_average}  # fmt: skip


def _counts_shown(snapshot: Snapshot, found: Traffic) -> bool:
    """Whether the served graph carries this poll's counts (checked on a sample of its edges)."""
    wanted = {f"{c.client} -> {c.server}": c.calls for c in found.calls[:: max(1, len(found.calls) // 50)]}
    counted = {key.partition(": ")[2]: count.calls for key, count in snapshot.calls.items()}
    return all(counted.get(key, calls) == calls for key, calls in wanted.items()) and bool(counted)


def _shape(snapshot: Snapshot, found: Traffic) -> dict[str, int]:
    edges = [e for out in snapshot.out_edges.values() for e in out]
    return {
        "entities": len(snapshot.entities),
        "edges": len(edges),
        "observed_edges": sum(e.observed for e in edges),
        "corroborated_edges": sum(e.observed and e.declared for e in edges),
        "unknown_services": len(snapshot.unknown_services),
        "observations": len(found.calls),
    }


def _answers(snapshot: Snapshot, hub: str, leaf: str, runs: int) -> dict[str, Any]:
    now, policy = clock(), StalePolicy()

    def blast(name: str) -> Any:
        return answer_blast(snapshot, BlastQuery(name), EVERYONE, now, policy)

    def slack(name: str) -> Any:
        bundle = blast(name)
        assert bundle.result is not None
        return format_blast_radius(bundle.result, bundle.freshness, passages=bundle.passages)

    at_hub = blast(hub).result
    assert at_hub is not None
    report = drift(snapshot, EVERYONE)
    slow = max(3, runs // 5)
    return {
        "hub": {
            "ref": hub,
            "impacted": at_hub.impacted_count,
            "answer": summary_ms(repeat(lambda: blast(hub), runs)),
            "slack_message": summary_ms(repeat(lambda: slack(hub), runs)),
        },  # fmt: skip
        "leaf": {
            "ref": leaf,
            "impacted": blast(leaf).result.impacted_count,
            "slack_message": summary_ms(repeat(lambda: slack(leaf), runs)),
        },  # fmt: skip
        "drift": {
            "undeclared": len(report.undeclared),
            "unobserved": len(report.unobserved),
            "unknown_services": len(report.unknown_services),
            "coverage": [
                report.coverage.components,
                report.coverage.declaring_dependencies,
                report.coverage.with_observed_traffic,
            ],  # fmt: skip
            "walk": summary_ms(repeat(lambda: drift(snapshot, EVERYONE), slow)),
            "json": summary_ms(repeat(lambda: json.dumps(drift_json(drift(snapshot, EVERYONE))), slow)),
            "json_mb": len(json.dumps(drift_json(report))) / 1e6,
        },
    }


def _timed_build(store: Store, names: list[str]) -> float:
    began = time.perf_counter()
    built = load_snapshot(store, clock, names)
    assert built is not None
    return round(time.perf_counter() - began, 3)


def _progress(message: str) -> None:
    print(f"[observed] {message}", file=sys.stderr, flush=True)


def _in_subprocess(name: str, runs: int) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        into = Path(folder) / "result.json"
        command = [sys.executable, "-m", "bench.observed_bench", "--measure", name, "--runs", str(runs)]
        subprocess.run([*command, "--into", str(into)], cwd=ROOT, check=True)
        return json.loads(into.read_text())


def print_results(results: dict[str, Any]) -> None:
    for name, r in results.items():
        g, answers = r["graph"], r["answers"]
        print(f"\n{name}: {g['entities']:,} entities, {g['edges']:,} edges, {g['observed_edges']:,} observed "
              f"({g['corroborated_edges']:,} also declared), {g['unknown_services']:,} unknown services, "
              f"from {g['observations']:,} observations; load average {r['load_average']:.1f}")  # fmt: skip
        print(f"  sync cold         {_steps(r['cold_sync'])}")
        for poll in r["unchanged_polls"]:
            verdict = "rebuilt" if poll["rebuilt"] else "not rebuilt"
            print(f"  sync unchanged    {_steps(poll)}: {verdict}, indexes kept {poll['indexes_kept']}, "
                  f"new counts shown {poll['counts_shown']}")  # fmt: skip
        builds = r["builds_from_store"]
        print(
            f"  build from store  {builds['with_traces']:.2f} s with the traces, {builds['catalog_only']:.2f} s without"
        )
        print(f"  peak RSS          {r['peak_rss_mb']:.0f} MB")
        hub, leaf, d = answers["hub"], answers["leaf"], answers["drift"]
        print(f"  blast radius at {hub['ref']} ({hub['impacted']:,} impacted): answer {_ms(hub['answer'])}, "
              f"Slack message {_ms(hub['slack_message'])}")  # fmt: skip
        print(
            f"  blast radius at {leaf['ref']} ({leaf['impacted']} impacted): Slack message {_ms(leaf['slack_message'])}"
        )
        print(f"  drift ({d['undeclared']:,} undeclared, {d['unobserved']:,} unobserved, {d['unknown_services']:,} "
              f"unknown): walk {_ms(d['walk'])}, as JSON {_ms(d['json'])} ({d['json_mb']:.0f} MB)")  # fmt: skip


def _steps(steps: dict[str, Any]) -> str:
    parts = ("catalog read", "catalog_read"), ("trace facts", "trace_facts"), ("store", "store"), (
        "build and warm", "build_and_warm")  # fmt: skip
    return f"{steps['total']:6.2f} s ({', '.join(f'{label} {steps[key]:.2f}' for label, key in parts)})"


def _ms(summary: dict[str, float]) -> str:
    return f"p50/p99 {summary['p50']:.1f}/{summary['p99']:.1f} ms"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="layered-10k with 20k observed edges")
    parser.add_argument("--runs", type=int, default=0, help="runs per latency figure (default: 30, 15 at 100k)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one scenario in this process
    parser.add_argument("--into", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        runs = args.runs or (15 if SCENARIOS[args.measure].entities >= 100_000 else 30)
        Path(args.into).write_text(json.dumps(measure_scenario(args.measure, runs)))
        return
    results = {name: _in_subprocess(name, args.runs) for name in (QUICK if args.quick else FULL)}
    print_results(results)
    OUT.mkdir(exist_ok=True)
    (OUT / "observed_results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten to {OUT / 'observed_results.json'}")


if __name__ == "__main__":
    main()

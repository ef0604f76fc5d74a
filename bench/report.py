"""The benchmark's results as plain-text tables, with the issue's targets checked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# From the issue that asked for the benchmark: (scenario, seconds) for parse + build.
LOAD_TARGETS = (("layered-100k", 10.0), ("dense-100k", 20.0))
RSS_TARGET_MB = 1536.0
SCIPY_FACTOR = 3.0


def print_report(results: dict[str, Any]) -> None:
    scenarios: dict[str, Any] = results["scenarios"]
    machine = results["machine"]
    print(f"\noncall-graph bench: {machine['cpus']} CPUs, Python {machine['python']}, {machine['platform']}")
    _table(
        "Cold load (fastest of the fresh-process loads): read_catalog (parse + facts), build_snapshot, walk-index"
        " compile; seconds; peak RSS of this process and of a parse worker, MB; load average when it started",
        [
            "scenario",
            "entities",
            "edges",
            "MB",
            "parse",
            "facts",
            "build",
            "compile",
            "total",
            "loads",
            "RSS",
            "workers",
            "load avg",
        ],
        [_load_row(name, s) for name, s in scenarios.items()],
    )
    _table(
        "Latency, ms p50/p99: blast radius (reach = impacted set + hops; display = reach + first 20 cited paths;"
        " all = every path materialized), suspects (depth 2)",
        ["scenario", "target", "impacted", "hops", "reach", "display", "all paths", "suspects"],
        [_query_row(name, t, q) for name, s in scenarios.items() for t, q in s["queries"].items()],
    )
    _table(
        "Same blast radius, other ways, ms p50 (ours = display): ratios ours/scipy, seed/ours, networkx/ours",
        ["scenario", "target", "scipy", "ours", "seed", "networkx", "ours/scipy", "seed/ours", "nx/ours", "same set"],
        [
            _baseline_row(name, t, b, s["queries"][t])
            for name, s in scenarios.items()
            for t, b in s["baselines"].items()
        ],
    )
    if results.get("parsers"):
        _table(
            "Parsing dense-100k to Python documents",
            ["parser", "seconds", "MB/s", "same as PyYAML"],
            [
                [
                    p["parser"],
                    f"{'~' if p['estimate'] else ''}{p['seconds']:.1f}",
                    f"{p['mb_per_s']:.1f}",
                    str(p["same"]),
                ]
                for p in results["parsers"]
            ],
        )
    _targets(scenarios)


def _load_row(name: str, scenario: dict[str, Any]) -> list[str]:
    load = scenario["load"]
    seconds = [f"{load.get(k, 0.0):.2f}" for k in ("parse", "facts", "build", "compile", "total")]
    sizes = [str(load["entities"]), str(load["edges"]), f"{load['size_mb']:.1f}"]
    totals = "/".join(f"{other['total']:.1f}" for other in scenario.get("loads", [load]))
    memory = [f"{load['rss_mb']:.0f}", f"{load['workers_mb']:.0f}", f"{load['load_average']:.1f}"]
    return [name, *sizes, *seconds, totals, *memory]


def _query_row(name: str, target: str, q: dict[str, Any]) -> list[str]:
    figures = [_pair(q[k]) for k in ("reach", "display", "all_paths", "suspects")]
    return [name, target, str(q["impacted"]), str(q["max_hops"]), *figures]


def _baseline_row(name: str, target: str, b: dict[str, Any], q: dict[str, Any]) -> list[str]:
    times = [f"{b['scipy']['p50']:.2f}", f"{q['display']['p50']:.2f}", f"{b['seed']['p50']:.1f}"]
    ratios = [f"{b['ours_over_scipy']:.1f}x", f"{b['seed_over_ours']:.1f}x", f"{b['networkx_over_ours']:.1f}x"]
    return [name, target, *times, f"{b['networkx']['p50']:.1f}", *ratios, "yes" if b["agree"] else "NO"]


def _pair(summary: dict[str, float]) -> str:
    return f"{summary['p50']:.2f}/{summary['p99']:.2f}"


def _targets(scenarios: dict[str, Any]) -> None:
    lines = []
    for name, limit in LOAD_TARGETS:
        if name in scenarios:
            total = scenarios[name]["load"]["total"]
            lines.append(_check(f"{name} parse+build {total:.1f} s < {limit:.0f} s", total < limit))
    for name, s in scenarios.items():
        worst = max(max(load["rss_mb"], load["workers_mb"]) for load in s.get("loads", [s["load"]]))
        lines.append(_check(f"{name} peak RSS {worst:.0f} MB < {RSS_TARGET_MB:.0f} MB", worst < RSS_TARGET_MB))
    if "dense-100k" in scenarios:
        ratio = scenarios["dense-100k"]["baselines"]["hub"]["ours_over_scipy"]
        lines.append(_check(f"dense-100k hub blast radius {ratio:.1f}x scipy <= {SCIPY_FACTOR:.0f}x", ratio <= 3))
    print("\nTargets")
    print("\n".join(lines))


def _check(text: str, ok: bool) -> str:
    return f"  [{'ok' if ok else 'MISSED'}] {text}"


def _table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=False)]
    print(f"\n{title}")
    for k, row in enumerate([header, *rows]):
        print(
            "  "
            + "  ".join(
                str(cell).rjust(w) if i else str(cell).ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if k == 0:
            print("  " + "  ".join("-" * w for w in widths))

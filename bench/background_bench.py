"""Answers beside a replica's background work: a /blast-radius at the hub, asked every 20 ms while a
rebuild (facts read, graph built, swapped in and warmed) or an image write runs on another thread,
unpaced and paced (`graph.background`, the step the server gives its jobs: `AnswerSlots.make_way`).

    python -m bench.background_bench            layered-10k and layered-100k
    python -m bench.background_bench --quick    layered-10k only

In one process, with the server's switch interval and its answer slots, on a SQLite file synced
from the catalog. An answer is `answer_blast` at the hub: the walk, the first paths, the passages.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from bench.generate import OUT
from bench.sync_bench import scenario_names, synced_sqlite
from bot.main import SWITCH_INTERVAL
from bot.query.blast import answer_blast
from bot.query.bundle import BlastQuery
from bot.slack.answer_slots import AnswerSlots
from bot.wiring import snapshot_ref
from graph.background import paced
from graph.exposure.visibility import EVERYONE
from graph.health.freshness import StalePolicy
from graph.snapshot import Snapshot
from sync.refresh import load_snapshot
from sync.store.database import make_engine
from sync.store.fact_store import Store
from sync.store.snapshot_image import dumps

QUIET = 30  # answers with nothing else running
APART = 0.02  # seconds between answers during a job


def clock() -> datetime:
    return datetime.now(UTC)


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1000


def figures(values: Sequence[float]) -> dict[str, float]:
    return {"answers": len(values), "p50_ms": percentile(values, 0.5), "p90_ms": percentile(values, 0.9),
            "max_ms": max(values) * 1000}  # fmt: skip


def beside(job: Callable[[], object], ask: Callable[[], object]) -> tuple[float, list[float]]:
    """(the job's seconds, each answer's seconds) with `job` on a thread and answers asked meanwhile."""
    done, took = threading.Event(), [0.0]

    def run() -> None:
        began = time.perf_counter()
        job()
        took[0] = time.perf_counter() - began
        done.set()

    thread = threading.Thread(target=run, name="background")
    thread.start()
    answers = []
    while not done.is_set():
        began = time.perf_counter()
        ask()
        answers.append(time.perf_counter() - began)
        time.sleep(APART)
    thread.join()
    return took[0], answers


def built(store: Store) -> Snapshot:
    snapshot = load_snapshot(store, clock)
    assert snapshot is not None, "the catalog was synced"
    return snapshot


def scenario(db: str, hub: str) -> dict[str, Any]:
    store = Store(make_engine(db))
    ref, slots = snapshot_ref(), AnswerSlots()
    ref.swap(served := built(store))

    def ask() -> None:
        with slots:
            answer_blast(served, BlastQuery(hub, None), EVERYONE, clock(), StalePolicy())

    def rebuild() -> None:
        ref.swap(built(store))

    def write(snapshot: Snapshot = served) -> None:
        dumps(snapshot)

    for _ in range(5):
        ask()
    quiet = []
    for _ in range(QUIET):
        began = time.perf_counter()
        ask()
        quiet.append(time.perf_counter() - began)
    results: dict[str, Any] = {"quiet": figures(quiet)}
    for name, job in (("rebuild", rebuild), ("image write", write)):
        for mode in ("unpaced", "paced"):

            def work(job: Callable[[], None] = job, mode: str = mode) -> None:
                with paced(slots.make_way() if mode == "paced" else None):
                    job()

            seconds, during = beside(work, ask)
            results[f"{name}, {mode}"] = {"job_s": seconds, **figures(during)}
    return results


def main(argv: Sequence[str] | None = None) -> None:
    names = scenario_names(argv, __doc__ or "")
    sys.setswitchinterval(SWITCH_INTERVAL)
    results: dict[str, Any] = {}
    for name, catalog, db, _ in synced_sqlite(names):
        results[name] = found = scenario(db, catalog.hub)
        q = found["quiet"]
        print(f"{name:>13} {'quiet':>20}: {q['answers']:3} answers  p50 {q['p50_ms']:6.1f}  p90 "
              f"{q['p90_ms']:6.1f}  max {q['max_ms']:6.1f} ms")  # fmt: skip
        for label, r in found.items():
            if label != "quiet":
                print(f"{name:>13} {label:>20}: {r['answers']:3} answers  p50 {r['p50_ms']:6.1f}  p90 "
                      f"{r['p90_ms']:6.1f}  max {r['max_ms']:6.1f} ms  (the job {r['job_s']:.2f} s)")  # fmt: skip
    OUT.mkdir(exist_ok=True)
    (OUT / "background_results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

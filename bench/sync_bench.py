"""Sync benchmark: cold sync, unchanged re-sync and restart-to-first-answer, on SQLite and PostgreSQL.

    python -m bench.sync_bench            layered-10k and layered-100k
    python -m bench.sync_bench --quick    layered-10k only

Every step is the real command line in its own process; peak RSS is that process's own
(`wait4`). PostgreSQL is a throwaway local cluster (tests/fakes/postgres_server.py).
`serve_restart_to_ready` is the bot's own restart: `oncall-graph serve` on the synced database
until `/healthz` says ready, then its first /blast-radius at the hub (a fake Slack answers).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.generate import OUT, SCENARIOS, Catalog, ensure_catalog
from tests.e2e.conftest import SECRET, start_bot, stop
from tests.fakes.postgres_server import create_database, postgres_cluster
from tests.fakes.slack_api import slack_api

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A throwaway folder that is also `$XDG_CACHE_HOME` until it goes: the snapshot images of the
    run's PostgreSQL databases (written by every command and bot started meanwhile) are kept in it,
    not left behind in the user's cache."""
    before = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["XDG_CACHE_HOME"] = scratch
        try:
            yield Path(scratch)
        finally:
            if before is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = before


def synced_sqlite(names: Sequence[str]) -> Iterator[tuple[str, Catalog, str, Path]]:
    """(name, catalog, database URL, scratch folder) per scenario: its catalog synced into a fresh
    SQLite file of one throwaway folder, which lives until the last is taken."""
    with scratch_folder() as scratch:
        for name in names:
            catalog = ensure_catalog(SCENARIOS[name])
            db = f"sqlite:///{scratch / f'{name}.db'}"
            run_cli("--catalog", str(catalog.folder), "--db", db, "sync")
            yield name, catalog, db, scratch


def run_cli(*args: str) -> dict[str, float]:
    """Wall seconds and peak RSS (MB) of one `oncall-graph` command."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "DATABASE_URL"))}
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", *args],
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - began
    errors = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"oncall-graph {' '.join(args)} failed:\n{errors[-2000:]}")
    return {"seconds": round(seconds, 3), "rss_mb": round(usage.ru_maxrss / 1024, 1)}


def serve_until_ready(db: str, hub: str, log: Path) -> dict[str, float]:
    """Wall seconds from starting `oncall-graph serve` on a synced database to `/healthz` ready,
    and the seconds to its first /blast-radius answer after that (the bot's own restart)."""
    with slack_api() as fake:
        began = time.perf_counter()
        bot = start_bot(log, PORT="0", SLACK_BOT_TOKEN="xoxb-bench", SLACK_SIGNING_SECRET=SECRET,
                        SLACK_API_URL=fake.url, DATABASE_URL=db, ONCALL_GRAPH_SYNC_INTERVAL="3600")  # fmt: skip
        ready = time.perf_counter() - began
        try:
            answered = time.perf_counter()
            bot.command("/blast-radius", hub, fake.response_url("first"))
            fake.wait_for(lambda: fake.responses("first"), timeout=60)
            first = time.perf_counter() - answered
        finally:
            stop(bot)
    return {"seconds": round(ready, 3), "first_answer_seconds": round(first, 3)}


def measure(catalog_folder: Path, hub: str, db: str, scratch: Path) -> dict[str, Any]:
    sources = ["--catalog", str(catalog_folder), "--db", db]
    return {
        "cold_sync": run_cli(*sources, "sync"),
        "unchanged_sync": run_cli(*sources, "sync"),
        "restart_to_first_answer": run_cli("--db", db, "resolve", hub),
        "serve_restart_to_ready": serve_until_ready(db, hub, scratch / "serve.log"),
    }


def scenario_names(argv: Sequence[str] | None, doc: str) -> list[str]:
    """layered-10k and layered-100k, or layered-10k alone with --quick."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args(argv).quick
    return ["layered-10k"] if quick else ["layered-10k", "layered-100k"]


def main(argv: Sequence[str] | None = None) -> None:
    names = scenario_names(argv, __doc__ or "")
    results: dict[str, Any] = {}
    with postgres_cluster() as admin_url, scratch_folder() as scratch:
        for number, name in enumerate(names):
            catalog = ensure_catalog(SCENARIOS[name])
            sqlite = f"sqlite:///{scratch / f'{name}.db'}"
            postgres = create_database(admin_url, f"bench_sync_{number}")
            results[name] = {"sqlite": measure(catalog.folder, catalog.hub, sqlite, scratch),
                             "postgresql": measure(catalog.folder, catalog.hub, postgres, scratch)}  # fmt: skip
            for db, steps in results[name].items():
                for step, figures in steps.items():
                    extra = f"{figures['rss_mb']:7.0f} MB" if "rss_mb" in figures else (
                        f"first answer {figures['first_answer_seconds']:.2f} s")  # fmt: skip
                    print(f"{name:>13} {db:>10} {step:>24}: {figures['seconds']:7.2f} s  {extra}")
    OUT.mkdir(exist_ok=True)
    (OUT / "sync_results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

"""Real processes: killed mid-sync, two replicas on one PostgreSQL, lag alerts across replicas."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from sync.store import schema
from sync.store.database import make_engine
from tests.fakes.http_source import SourceServer, source_server

ROOT = Path(__file__).resolve().parents[2]


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_"))}
    return {**base, "PYTHONPATH": str(ROOT), **extra}


def cli(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, env=env(**extra), timeout=180
    )


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def write_catalog(folder: Path, count: int, tag: str) -> None:
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.yaml"):
        old.unlink()
    for chunk in range(0, count, 500):
        docs = []
        for i in range(chunk, min(chunk + 500, count)):
            dep = f"\n    dependsOn: [component:svc-{tag}-{i - 1}]" if i else ""
            docs.append(
                f"apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: svc-{tag}-{i}\n"
                f"spec:\n    type: service\n    lifecycle: production\n    owner: group:team{dep}\n"
            )
        (folder / f"part-{chunk}.yaml").write_text("---\n".join(docs))


def kill_sync_while_writing(catalog: Path, db: str, wal: Path) -> None:
    """Start `oncall-graph sync` and SIGKILL it while it writes facts (its write-ahead log grows)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "--catalog", str(catalog), "--db", db, "sync"],
        env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    baseline = wal.stat().st_size if wal.exists() else 0
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if wal.exists() and wal.stat().st_size > baseline + 1_000_000:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the sync finished before it could be killed; make the catalog larger"
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_a_sync_killed_with_sigkill_leaves_the_last_good_graph(tmp_path: Path) -> None:
    catalog, db = tmp_path / "catalog", f"sqlite:///{tmp_path / 'graph.db'}"
    write_catalog(catalog, 50, "good")
    assert cli("--catalog", str(catalog), "--db", db, "sync").returncode == 0
    write_catalog(catalog, 20_000, "next")
    kill_sync_while_writing(catalog, db, tmp_path / "graph.db-wal")
    done = cli("--db", db, "resolve", "svc-good-49", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["entity"] == "component:default/svc-good-49"
    # The interrupted version was never half-applied: the next sync applies it whole.
    assert cli("--catalog", str(catalog), "--db", db, "sync").returncode == 0
    after = cli("--db", db, "resolve", "svc-next-19999", "--json")
    assert json.loads(after.stdout)["entity"] == "component:default/svc-next-19999"
    assert json.loads(cli("--db", db, "resolve", "svc-good-49", "--json").stdout)["entity"] is None


def test_a_first_sync_killed_with_sigkill_leaves_an_empty_database_with_its_indexes(tmp_path: Path) -> None:
    """A first load drops the facts indexes until it ends: a kill must leave them as they were."""
    catalog, db = tmp_path / "catalog", f"sqlite:///{tmp_path / 'graph.db'}"
    write_catalog(catalog, 20_000, "first")
    assert cli("--db", db, "migrate").returncode == 0
    engine = make_engine(db)
    with engine.connect() as conn:
        indexes = conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'facts'").all()
    kill_sync_while_writing(catalog, db, tmp_path / "graph.db-wal")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'facts'").all() == indexes
        assert conn.execute(select(schema.facts.c.id).limit(1)).first() is None
    engine.dispose()
    done = cli("--catalog", str(catalog), "--db", db, "sync")
    assert done.returncode == 0
    assert "Warning" not in done.stderr  # its worker processes start quietly
    after = cli("--db", db, "resolve", "svc-first-19999", "--json")
    assert json.loads(after.stdout)["entity"] == "component:default/svc-first-19999"


class Replica:
    def __init__(self, name: str, log: Path, **settings: str) -> None:
        self.log = log
        self.handle = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve"],
            env=env(PORT="0", **settings),
            stdout=self.handle,
            stderr=self.handle,
        )

    def output(self) -> str:
        return self.log.read_text()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self.handle.close()
        return code


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[Callable[..., Replica]]:
    started: list[Replica] = []

    def start(name: str, **settings: str) -> Replica:
        replica = Replica(name, tmp_path / f"{name}.log", **settings)
        started.append(replica)
        return replica

    yield start
    for replica in started:
        if replica.proc.poll() is None:
            replica.proc.kill()
            replica.proc.wait()


def test_two_replicas_on_postgresql_one_syncs_both_serve_the_new_version(
    postgres_url: str, tmp_path: Path, replicas: Callable[..., Replica]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("The checkout depends on payments.\n")
    settings = {
        "DATABASE_URL": postgres_url, "ONCALL_GRAPH_DOCS": str(docs),
        "ONCALL_GRAPH_SYNC_INTERVAL": "1", "ONCALL_GRAPH_POLL_INTERVAL": "1",
    }  # fmt: skip
    one, two = replicas("one", **settings), replicas("two", **settings)
    wait_for(lambda: "synced: graph version 1" in one.output() + two.output(), 60, "the first sync")
    (docs / "a.md").write_text("The checkout depends on payments.\nThe checkout depends on the ledger.\n")
    leader, follower = (one, two) if "synced: graph version 1" in one.output() else (two, one)
    wait_for(lambda: "synced: graph version 2" in leader.output(), 30, "the leader's second sync")
    wait_for(lambda: "graph version 2 served by rebuild" in follower.output(), 5, "the follower to load version 2")
    assert "synced:" not in follower.output()
    engine = make_engine(postgres_url)
    with engine.connect() as conn:
        syncing = set(conn.execute(select(schema.sync_runs.c.replica).distinct()).scalars())
    engine.dispose()
    assert len(syncing) == 1
    assert leader.stop() == 0 and follower.stop() == 0


def test_lag_alerts_once_on_stale_and_once_on_recovery_across_two_replicas(
    postgres_url: str, tmp_path: Path, replicas: Callable[..., Replica]
) -> None:
    with source_server() as server:
        _run_lag_scenario(server, postgres_url, replicas)


def _run_lag_scenario(server: SourceServer, postgres_url: str, replicas: Callable[..., Replica]) -> None:
    url = server.serve("/deploys", "down", status=500)
    settings = {
        "DATABASE_URL": postgres_url, "ONCALL_GRAPH_DEPLOYS": url, "ONCALL_GRAPH_SYNC_INTERVAL": "1",
        "ONCALL_GRAPH_POLL_INTERVAL": "1", "ONCALL_GRAPH_STALE_AFTER": f"deploys:{url}=2",
    }  # fmt: skip
    one, two = replicas("one", **settings), replicas("two", **settings)
    both = lambda: one.output() + two.output()  # noqa: E731
    wait_for(lambda: "is stale" in both(), 60, "the stale alert")
    time.sleep(3)  # several more ticks on both replicas: none may repeat the alert
    assert both().count("is stale") == 1
    line = '{"id": "r-1", "service": "x", "deployed_at": "2026-11-29T11:00:00Z"}'
    server.serve("/deploys", line)
    wait_for(lambda: "recovered" in both(), 30, "the recovery alert")
    time.sleep(3)
    assert both().count("recovered") == 1
    assert both().count("is stale") == 1
    assert one.stop() == 0 and two.stop() == 0

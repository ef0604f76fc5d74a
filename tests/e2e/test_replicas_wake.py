"""A deploy pushed to one replica is answered by the others at once: woken by PostgreSQL's NOTIFY, or
by the short poll of a SQLite file shared by two processes; the follow poll is set to a minute, so
only the wake can explain an answer within the test's wait. Real HTTP, signed in the test."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import psycopg

from sync.store.version_signal import LISTENER_NAME
from tests.e2e.conftest import Bot, write_sources
from tests.e2e.test_deploy_webhooks import ON, stored
from tests.e2e.webhook_posts import deployment_status, github, raw, suspects_until
from tests.fakes.slack_api import FakeSlack

# No follow poll and no second tick within the test: only a wake can bring the deploy in.
SLOW = {"ONCALL_GRAPH_POLL_INTERVAL": "60", "ONCALL_GRAPH_SYNC_INTERVAL": "600", **ON}
FIRST_TICK = 5.5  # seconds after start by which the first tick (a sync, or a follower's follow) has run
WAIT = 20  # seconds an answer may take here; well under the poll interval
LISTENING = "listening for graph version moves"


def two_replicas(bot_factory: Callable[..., Bot], tmp_path: Path, database_url: str) -> tuple[Bot, Bot]:
    sources = write_sources(tmp_path / "shared")
    one = bot_factory("one", database_url=database_url, sources=sources, **SLOW)
    two = bot_factory("two", database_url=database_url, sources=sources, **SLOW)
    ready = time.monotonic()
    wait_for(lambda: "synced:" in one.output(), "the first sync")
    time.sleep(max(0.0, ready + FIRST_TICK - time.monotonic()))  # the follower's first tick is behind us
    return one, two


def wait_for(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_two_replicas_on_postgresql_a_push_to_one_is_answered_by_the_other_at_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, postgres_url: str, tmp_path: Path
) -> None:
    one, two = two_replicas(bot_factory, tmp_path, postgres_url)
    assert LISTENING in two.output()
    assert github(one, raw(deployment_status(6001)), delivery="w-1").json()["stored"] == ["gh-6001"]
    suspects_until(two, fake_slack, "gh-6001", timeout=WAIT)
    suspects_until(one, fake_slack, "gh-6001", timeout=WAIT)  # its own push: heard by its own watch too
    assert stored(postgres_url, "webhook:github") == 1
    assert "Traceback" not in two.output()


def test_two_processes_on_one_sqlite_file_a_push_to_one_is_answered_by_the_other_at_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    database = f"sqlite:///{tmp_path / 'shared.db'}"
    one, two = two_replicas(bot_factory, tmp_path, database)
    wait_for(lambda: "synced:" in two.output(), "the second process's first sync")  # both lead on SQLite
    assert github(one, raw(deployment_status(6002)), delivery="w-2").json()["stored"] == ["gh-6002"]
    suspects_until(two, fake_slack, "gh-6002", timeout=WAIT)
    suspects_until(one, fake_slack, "gh-6002", timeout=WAIT)
    assert "Traceback" not in two.output()


def test_the_watch_survives_its_connection_dropped_and_wakes_again_after_reconnecting(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, postgres_url: str, tmp_path: Path
) -> None:
    one, two = two_replicas(bot_factory, tmp_path, postgres_url)
    dsn = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as admin:
        query = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s"
        dropped = admin.execute(query, (LISTENER_NAME,)).fetchall()
        assert len(dropped) == 2 and all(ok for (ok,) in dropped)  # both replicas' listeners
        wait_for(lambda: two.output().count(LISTENING) == 2, "the follower listening again")
        listening = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
        wait_for(lambda: admin.execute(listening, (LISTENER_NAME,)).fetchone() == (2,), "both listening again")
    assert "lost the LISTEN connection" in two.output()
    # Reconnected, the watch only listens (it polls only while disconnected): the wake is the NOTIFY's.
    assert github(one, raw(deployment_status(6003)), delivery="w-3").json()["stored"] == ["gh-6003"]
    suspects_until(two, fake_slack, "gh-6003", timeout=WAIT)
    assert two.proc.poll() is None and "Traceback" not in two.output()

"""Two `oncall-graph serve` on one PostgreSQL, for the webhook benchmarks: the leader takes the
deploys, the follower learns of them from the version's NOTIFY and a delta read from the store.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bench.generate import SCENARIOS, Catalog, ensure_catalog
from bench.sync_bench import run_cli, scratch_folder
from tests.e2e.conftest import SECRET, Bot, start_bot, stop
from tests.e2e.test_slack_bot import text_of
from tests.e2e.webhook_posts import DEPLOY_SECRET
from tests.fakes.postgres_server import create_database, postgres_cluster
from tests.fakes.slack_api import FakeSlack

TIMEOUT = 60.0


def synced_scenarios(names: Sequence[str], prefix: str) -> Iterator[tuple[str, Catalog, str, Path]]:
    """(name, catalog, database URL, scratch folder) per scenario: its catalog synced into a fresh
    database of one throwaway PostgreSQL, which lives until the last is taken."""
    with postgres_cluster() as admin_url, scratch_folder() as scratch:
        for number, name in enumerate(names):
            catalog = ensure_catalog(SCENARIOS[name])
            db = create_database(admin_url, f"{prefix}_{number}")
            run_cli("--catalog", str(catalog.folder), "--db", db, "sync")
            yield name, catalog, db, scratch


@contextmanager
def two_replicas(catalog: Catalog, db: str, fake: FakeSlack, logs: Path) -> Iterator[tuple[Bot, Bot]]:
    """(leader, follower) serving `db` (synced from `catalog`); their logs are printed when the body
    raises RuntimeError. The poll (ONCALL_GRAPH_POLL_INTERVAL) is 60 s, so only the version's wake
    can move the follower sooner."""
    env = {
        "PORT": "0", "SLACK_BOT_TOKEN": "xoxb-bench", "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.url, "DATABASE_URL": db, "ONCALL_GRAPH_SYNC_INTERVAL": "3600",
        "ONCALL_GRAPH_POLL_INTERVAL": "60", "ONCALL_GRAPH_DEPLOY_WEBHOOK_SECRETS": DEPLOY_SECRET,
        "ONCALL_GRAPH_CATALOG": str(catalog.folder),
    }  # fmt: skip
    name = catalog.scenario.name
    bots = [start_bot(logs / f"{name}-{i}.log", **env) for i in (1, 2)]
    try:
        yield bots[0], bots[1]
    except RuntimeError:
        print("\n".join(bot.output()[-3000:] for bot in bots))
        raise
    finally:
        for bot in bots:
            stop(bot)


def shown_after(bot: Bot, fake: FakeSlack, service: str, deploy_id: str, posted: float) -> float:
    """Seconds from `posted` until an answer of `/suspects SERVICE` on `bot` shows `deploy_id`."""
    shown = ""
    while time.perf_counter() - posted < TIMEOUT:
        name = f"s-{uuid.uuid4().hex}"
        bot.command("/suspects", f"{service} 6h", fake.response_url(name))
        fake.wait_for(functools.partial(fake.responses, name), timeout=TIMEOUT)
        shown = text_of(fake.responses(name)[0])
        if deploy_id in shown:
            return time.perf_counter() - posted
        time.sleep(0.02)
    raise RuntimeError(f"{deploy_id} was not shown within {TIMEOUT} s; the last answer:\n{shown[:1500]}")

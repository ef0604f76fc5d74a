"""Reviewing extracted edges from Slack, end to end: edges extracted by the command line against the fake
Anthropic server, then the served bot's /graph-lag button and Approve/Reject buttons, clicked with
signed interactive payloads by an admin and by someone who is not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import select

from sync.store import schema
from sync.store.database import make_engine
from tests.e2e.conftest import ADMIN, ROOT, Bot, write_sources
from tests.e2e.test_slack_bot import only_response, text_of
from tests.fakes.anthropic_api import API_KEY, anthropic_api, tool_use
from tests.fakes.slack_api import FakeSlack

RUNBOOK = """# Shipping runbook

The shipping service publishes label events to kafka.
Shipping reads addresses from the inventory-db.
"""
EDGES = [
    {"src": "shipping", "rel": "reads_from", "dst": "inventory-db",
     "evidence": "Shipping reads addresses from the inventory-db."},
    {"src": "shipping", "rel": "publishes_to", "dst": "kafka",
     "evidence": "The shipping service publishes label events to kafka."},
]  # fmt: skip


def extract(database_url: str, docs: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "ANTHROPIC_"))}
    with anthropic_api() as fake:
        fake.queue(tool_use("record_relations", {"relations": EDGES}))
        env |= {"PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.url}
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli", "--db", database_url, "extract", "--docs", str(docs), "--yes", "--json"],
            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["held"] == 2


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for b in message.get("blocks", []) if b.get("type") == "actions" for e in b["elements"]]


def test_an_admin_reviews_extracted_edges_with_buttons_and_a_non_admin_is_refused(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    database_url = f"sqlite:///{tmp_path / 'graph.db'}"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "shipping.md").write_text(RUNBOOK)
    extract(database_url, tmp_path / "docs")
    bot = bot_factory(database_url=database_url, sources=write_sources(tmp_path / "sources"))

    bot.action("review_approve", json.dumps({"id": 1}), fake_slack.response_url("n1"), user="UNOBODY")
    refused = only_response(fake_slack, "n1")
    assert "admin" in text_of(refused).lower() and "inventory-db" not in text_of(refused)
    assert "refused review action review_approve to non-admin user UNOBODY" in bot.output()

    bot.command("/graph-lag", "", fake_slack.response_url("l1"), user=ADMIN)
    [open_queue] = [b for b in buttons(only_response(fake_slack, "l1")) if b["action_id"] == "review_extracted"]
    assert open_queue["text"]["text"] == "Review 2 extracted edges"
    bot.action("review_extracted", open_queue["value"], fake_slack.response_url("q1"), user=ADMIN)
    queue = only_response(fake_slack, "q1")
    shown = text_of(queue)
    assert "Shipping reads addresses from the inventory-db." in shown
    assert "docs/shipping.md:4 (chunk 1, lines 1-4, claude-haiku-4-5)" in shown
    approve = next(b for b in buttons(queue) if b["action_id"] == "review_approve")
    assert json.loads(approve["value"]) == {"id": 1}

    bot.action("review_approve", approve["value"], fake_slack.response_url("a1"), user=ADMIN)
    after = only_response(fake_slack, "a1")
    assert after.get("replace_original") is True
    assert f"approved #1 (shipping reads_from inventory-db) by {ADMIN}" in text_of(after)
    assert [json.loads(b["value"])["id"] for b in buttons(after)] == [2, 2]  # the other one is left
    bot.action("review_reject", json.dumps({"id": 2}), fake_slack.response_url("r1"), user=ADMIN)
    assert "Nothing awaits review" in text_of(only_response(fake_slack, "r1"))

    engine = make_engine(database_url)
    with engine.connect() as conn:
        audit = conn.execute(select(schema.review_audit.c.action, schema.review_audit.c.actor)).all()
        decided = conn.execute(select(schema.extracted_edges.c.id, schema.extracted_edges.c.decided_by)).all()
    engine.dispose()
    assert sorted(audit) == [("approve-extracted", ADMIN), ("reject-extracted", ADMIN)]
    assert sorted(decided) == [(1, ADMIN), (2, ADMIN)]

    bot.command("/blast-radius", "inventory-db", fake_slack.response_url("b1"), user=ADMIN)
    answer = text_of(only_response(fake_slack, "b1"))
    assert "shipping" in answer and "chunk 1" in answer and "claude-haiku-4-5" in answer

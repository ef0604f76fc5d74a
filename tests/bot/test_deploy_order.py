"""An entity's deploys newest first, in every front, with the count of those a front leaves out: the
freshest deploy is the one most likely to matter, and the last one any list may drop."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta
from typing import Any

from bot.mcp.tools import GraphAccess, call_tool
from bot.render.dot import DEPLOYS_SHOWN as PICTURE_SHOWN
from bot.render.dot import suspects_dot
from bot.render.json import suspects_json
from bot.render.text import render_suspects
from bot.slack.blocks.kit import text_length
from bot.slack.blocks.suspects import DEPLOYS_SHOWN, format_suspects
from graph.health.freshness import StalePolicy
from graph.questions.ask import ask
from graph.snapshot import Snapshot
from graph.walks.suspects import suspects
from tests.bot.slack.test_blocks import NOW, assert_within_limits, c, deploy, fresh, judged, texts
from tests.graph.builders import dep, entity, snapshot

COUNT = 8  # more than any front shows of one entity's deploys


def deployed() -> Snapshot:
    """payments -> antifraud; each deployed COUNT times in the last hour, fed oldest first."""
    feed = [
        deploy(f"{service[0]}-{i}", service, NOW - timedelta(minutes=60 - 5 * i), version=f"v{i}")
        for service in ("payments", "antifraud")
        for i in range(COUNT)
    ]
    return fresh(snapshot([entity(c("payments")), entity(c("antifraud"))], [dep(c("payments"), c("antifraud"))], feed))


def newest_first(prefix: str, count: int = COUNT) -> list[str]:
    return [f"{prefix}-{i}" for i in reversed(range(COUNT))][:count]


def ids_in(text: str, prefix: str) -> list[str]:
    return re.findall(rf"\b{prefix}-\d+\b", text)


def test_the_walk_lists_an_entitys_deploys_and_each_dependencys_newest_first() -> None:
    found = suspects(deployed(), c("payments"), now=NOW)
    assert [s.deploy.id for s in found.own_deploys] == newest_first("p")
    assert [s.deploy.id for s in found.dependencies[0].deploys] == newest_first("a")


def test_slack_shows_the_newest_deploys_and_counts_the_rest() -> None:
    snap = deployed()
    message = format_suspects(suspects(snap, c("payments"), now=NOW), judged(snap))
    assert_within_limits(message)
    shown = html.unescape("\n".join(texts(list(message.blocks))))
    assert ids_in(shown, "p") == newest_first("p", DEPLOYS_SHOWN)
    assert ids_in(shown, "a") == newest_first("a", DEPLOYS_SHOWN)
    assert f"… and {COUNT - DEPLOYS_SHOWN} more of its own deploys" in shown
    assert f"… and {COUNT - DEPLOYS_SHOWN} more deploys" in shown
    assert message.full_text is not None and ids_in(message.full_text, "p") == newest_first("p")
    assert text_length(message.blocks) < 10_000


def test_the_terminal_the_json_and_mcp_list_every_deploy_newest_first() -> None:
    snap = deployed()
    found = suspects(snap, c("payments"), now=NOW)
    terminal = "\n".join(line.plain for line in render_suspects(found))
    assert ids_in(terminal, "p") == newest_first("p") and ids_in(terminal, "a") == newest_first("a")
    data = suspects_json("payments", found)
    assert [d["id"] for d in data["own_deploys"]] == newest_first("p")
    assert [d["id"] for d in data["dependencies"][0]["deploys"]] == newest_first("a")
    lag: dict[str, Any] = {"sources": [], "stale": False}
    access = GraphAccess(lambda: snap, lambda: lag, lambda: NOW, StalePolicy(), now=NOW)
    tool = call_tool(access, "suspects", {"name": "payments", "since": "6h"})
    assert [d["id"] for d in tool["own_deploys"]] == newest_first("p")
    assert [d["id"] for d in tool["dependencies"][0]["deploys"]] == newest_first("a")


def test_the_picture_labels_the_newest_deploys_and_counts_the_rest() -> None:
    snap = deployed()
    dot = suspects_dot(suspects(snap, c("payments"), now=NOW), snap).source.replace("\\n", "\n")
    assert ids_in(dot, "p") == newest_first("p", PICTURE_SHOWN)
    assert ids_in(dot, "a") == newest_first("a", PICTURE_SHOWN)
    assert dot.count(f"+{COUNT - PICTURE_SHOWN} more deploys") == 2


def test_a_question_about_changes_names_the_newest_deploy_first() -> None:
    answer = ask(deployed(), "what changed in payments?", now=NOW)
    said = json.dumps([s.lines for s in answer.sections])
    assert ids_in(said, "p") == newest_first("p") and ids_in(said, "a") == newest_first("a")

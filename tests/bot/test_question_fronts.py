"""Free-text questions as on-call engineers type them, through every front that takes one: `ask` on the
command line (text, `--json` and its exit status), a Slack mention, and the MCP `ask` tool. Each front
renders the same answer; these pin down what a front shows of it."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from bot.mcp.tools import GraphAccess, call_tool
from bot.query.ask import answer_ask
from bot.query.replies import ask_reply
from bot.slack import events
from graph.exposure.visibility import EVERYONE
from graph.health.freshness import StalePolicy
from graph.snapshot import Snapshot
from tests.bot.slack.slack_doubles import RecordingClient
from tests.bot.slack.test_handlers import make_deps
from tests.questions.graphs import ACME, NOW, ROOT, acme

ACME_SOURCES = [
    "--catalog", str(ACME / "catalog"), "--deploys", str(ACME / "deploys.jsonl"), "--docs", str(ACME / "runbooks"),
    "--triples", str(ACME / "triples.json"), "--aliases", str(ACME / "aliases.yaml"),
    "--db", "sqlite:///:memory:", "--now", NOW.isoformat(),
]  # fmt: skip
YES_NO = "if redis dies does checkout go down too?"
YES_NO_TITLE = "checkout — if redis goes down"


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    return acme(tmp_path_factory.mktemp("acme"))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "ANTHROPIC_"))}
    command = [sys.executable, "-m", "bot.cli", *ACME_SOURCES, *args]
    return subprocess.run(command, capture_output=True, text=True, env={**env, "PYTHONPATH": str(ROOT)}, timeout=120)


def mcp_ask(graph: Snapshot, question: str) -> dict[str, Any]:
    access = GraphAccess(lambda: graph, lambda: {}, lambda: NOW, viewer=EVERYONE)
    return call_tool(access, "ask", {"question": question})


def mention_text(graph: Snapshot, question: str) -> str:
    """The Slack reply to an @mention of the question: its blocks' text, mrkdwn entities decoded."""
    deps, client = make_deps(snapshot=lambda: graph, clock=lambda: NOW), RecordingClient()
    event = {"type": "app_mention", "channel": "COPS", "user": "UUSER", "ts": "1.1", "text": f"<@UBOT> {question}"}
    events.on_app_mention({"event_id": "Ev1", "event": event}, event, client, deps)
    [reply] = client.posted()
    return html.unescape(json.dumps(reply["blocks"], ensure_ascii=False))


def test_a_yes_no_impact_question_is_one_section_on_the_command_line() -> None:
    done = cli("ask", YES_NO, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(s["kind"], s["title"]) for s in data["sections"]] == [("affected", YES_NO_TITLE)]
    assert data["sections"][0]["lines"][0] == "Yes: checkout breaks if redis goes down."
    assert data["sections"][0]["cited"] == [
        "checkout -depends_on-> cart [catalog/storefront.yaml#3] x1",
        "cart -depends_on-> redis [catalog/storefront.yaml#4] x1",
    ]
    assert data["asks"] == [
        {"kind": "affected", "entities": ["component:default/checkout", "resource:default/redis"], "window_hours": None}
    ]
    text = cli("ask", YES_NO)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert YES_NO_TITLE in lines and "  Yes: checkout breaks if redis goes down." in lines
    assert not any("Survives" in line or "what breaks if it fails" in line for line in lines)


def test_a_yes_no_impact_question_is_one_section_in_a_slack_mention(graph: Snapshot) -> None:
    shown = mention_text(graph, "would web-frontend be affected by a redis outage?")
    assert "*web-frontend — if redis goes down*" in shown
    assert "No, it degrades: web-frontend does not break if redis goes down, but it degrades." in shown
    assert "what breaks if it fails" not in shown and "Survives" not in shown


def test_a_yes_no_impact_question_is_one_section_from_the_mcp_ask_tool(graph: Snapshot) -> None:
    got = mcp_ask(graph, "is login-flow impacted when users-db is down")
    assert [(s["kind"], s["title"]) for s in got["sections"]] == [("affected", "login-flow — if users-db goes down")]
    assert got["sections"][0]["lines"][0] == "Yes: login-flow breaks if users-db goes down."
    bundle = answer_ask(graph, "is login-flow impacted when users-db is down", EVERYONE, NOW, StalePolicy())
    assert got == ask_reply(bundle).data


TYPO = "is checkout connected to redsi"
TYPO_NOTE = "'redsi' matches no entity in the graph. Did you mean: redis?"


def test_a_misspelt_second_name_is_answered_with_suggestions_and_exits_1() -> None:
    done = cli("ask", TYPO, "--json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["notes"] == [TYPO_NOTE] and data["sections"] == []  # never checkout's dependencies alone
    assert {"text": "redsi", "entity": None, "candidates": []} in data["mentions"]
    text = cli("ask", TYPO)
    assert text.returncode == 1 and text.stdout.splitlines()[-1] == TYPO_NOTE


def test_a_misspelt_second_name_is_answered_with_suggestions_in_slack_and_mcp(graph: Snapshot) -> None:
    question = "who owns redis and kafak?"
    note = "'kafak' matches no entity in the graph. Did you mean: kafka?"
    shown = mention_text(graph, question)
    assert note in shown and "redis is owned by sre." in shown
    got = mcp_ask(graph, question)
    assert got["notes"] == [note]
    assert [(s["kind"], s["entities"]) for s in got["sections"]] == [("ownership", ["resource:default/redis"])]


@pytest.mark.parametrize(
    ("question", "first_line"),
    [
        ("what got deployed in the last 2 hours?", "5 deploys in the last 2 hours:"),
        ("what changed in the last 5 minutes?", "Nothing in the graph was deployed in the last 5 minutes."),
        ("any deploys today?", "10 deploys in the last 15 hours:"),
        ("what are our single points of failure?", "Single points of failure, by how much breaks with them:"),
        ("what are the spofs, and what shipped since yesterday?", "11 deploys in the last 39 hours:"),
    ],
)
def test_a_whole_graph_question_answered_exits_0(question: str, first_line: str) -> None:
    done = cli("ask", question, "--json")
    assert done.returncode == 0, done.stdout
    data = json.loads(done.stdout)
    assert data["entities"] == [] and data["sections"][0]["lines"][0] == first_line


@pytest.mark.parametrize("question", ["hello?", "what changed in memcached recently", "who owns antifraude-svc?"])
def test_a_question_naming_nothing_the_graph_holds_exits_1(question: str) -> None:
    done = cli("ask", question, "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["sections"] == []


CLAMPED = (
    "'past 0 hours' is outside the windows answers take, from 1 minute to 1 year (1m … 365d): answered for the"
    " last minute instead."
)


def test_a_window_outside_the_range_is_said_on_the_command_line() -> None:
    done = cli("ask", "what got deployed in the past 0 hours?", "--json")
    assert done.returncode == 0, done.stdout
    data = json.loads(done.stdout)
    assert data["notes"] == [CLAMPED] and data["asks"][0]["window_hours"] == 1 / 60
    assert data["sections"][0]["lines"] == ["Nothing in the graph was deployed in the last 1 minute."]
    text = cli("ask", "what got deployed in the past 0 hours?").stdout.splitlines()
    assert CLAMPED in text


def test_a_window_outside_the_range_is_said_by_the_mcp_ask_tool(graph: Snapshot) -> None:
    got = mcp_ask(graph, "what changed in payments over the last 3 years?")
    assert got["notes"] == [
        "'over the last 3 years' is outside the windows answers take, from 1 minute to 1 year (1m … 365d):"
        " answered for the last year (365 days) instead."
    ]
    assert got["asks"][0]["window_hours"] == 365 * 24

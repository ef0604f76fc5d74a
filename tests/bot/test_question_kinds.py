"""Every question kind is declared once (`bot/query/kinds.py`) and every front renders each kind it
takes: a kind added and a front forgotten fails here, not in front of someone at 3 a.m.

A new front is one renderer table beside it, its `Front` (the kinds it takes, read from its own parser
or handlers), and one entry in FRONTS below.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from bot.cli.main import FRONT as COMMAND_LINE
from bot.cli.parser import NOT_COMMANDS, build_parser
from bot.mcp import tools
from bot.mcp.tools import GraphAccess, call_tool
from bot.query.kinds import (
    ASK,
    BLAST,
    DRIFT,
    LAG,
    LINT,
    NAME,
    NOTHING,
    PATH,
    QUESTION,
    QUESTION_KINDS,
    RESOLVE,
    SUSPECTS,
    TWO_NAMES,
    Front,
    question_kind,
)
from bot.query.replies import reply
from bot.slack import assistant, home, shortcuts, unfurls
from bot.slack import replies as slack_replies
from bot.slack.arguments import USAGE
from graph.exposure.visibility import EVERYONE
from graph.health.freshness import StalePolicy, judge
from graph.snapshot import Snapshot
from tests.bot.slack.test_handlers import make_deps
from tests.questions.graphs import NOW, ROOT, acme

FRONTS: list[Front] = [
    COMMAND_LINE,
    tools.FRONT,
    slack_replies.SLASH_COMMANDS,
    slack_replies.MENTIONS,
    slack_replies.ALERT_THREADS,
    assistant.FRONT,
    unfurls.FRONT,
    home.FRONT,
    shortcuts.FRONT,
]
DECLARED = {kind.name for kind in QUESTION_KINDS}
# What each kind is asked on the command line, about the acme example: a kind without one fails below.
ASKED = {
    BLAST: ["redis", "--depth", "2"],
    SUSPECTS: ["checkout", "--since", "2d"],
    PATH: ["checkout", "redis"],
    RESOLVE: ["postgres"],
    ASK: ["who owns redis?"],
    LINT: [],
    DRIFT: ["--limit", "3"],
    LAG: [],
}
# The same, as the MCP tools take it.
TOOL_ARGUMENTS: dict[str, dict[str, Any]] = {
    BLAST: {"name": "redis", "depth": 2},
    SUSPECTS: {"name": "checkout", "since": "2d"},
    PATH: {"from": "checkout", "to": "redis"},
    RESOLVE: {"name": "postgres"},
    ASK: {"question": "who owns redis?"},
    LINT: {},
    DRIFT: {"limit": 3},
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    return acme(tmp_path_factory.mktemp("acme"))


@pytest.mark.parametrize("front", FRONTS, ids=lambda front: front.name)
def test_every_front_renders_every_kind_it_takes(front: Front) -> None:
    assert front.takes, f"{front.name} takes no question kind"
    assert front.takes <= DECLARED, f"{front.name} takes undeclared kinds {sorted(front.takes - DECLARED)}"
    missing = front.takes - set(front.renders)
    assert not missing, f"{front.name} takes {sorted(missing)} but its table renders none of them"
    assert set(front.renders) <= DECLARED, f"{front.name} renders undeclared kinds"


def test_every_declared_kind_is_a_command_but_the_alert_and_the_glance() -> None:
    assert DECLARED - COMMAND_LINE.takes == NOT_COMMANDS == {"alert", "glance"}
    for kind in DECLARED:
        assert any(kind in front.takes for front in FRONTS), f"no front takes {kind}"


def test_the_fronts_have_names_of_their_own() -> None:
    names = [front.name for front in FRONTS]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("tool", tools.TOOLS, ids=lambda tool: tool.name)
def test_each_mcp_tool_takes_what_its_kind_takes(tool: tools.ToolSpec) -> None:
    kind = question_kind(tool.kind)
    subject = {NAME: ["name"], TWO_NAMES: ["from", "to"], QUESTION: ["question"], NOTHING: []}[kind.subject]
    assert tool.input_schema["required"] == subject
    assert list(tool.input_schema["properties"]) == subject + [option.name for option in kind.options]


@pytest.mark.parametrize("command", sorted(slack_replies.SLASH_COMMANDS.takes))
def test_each_slash_command_is_in_the_manifest_with_its_kinds_flags(command: str) -> None:
    usage = USAGE[command]
    assert usage.startswith(f"/{command} NAME")
    assert [word.strip("[") for word in usage.split() if word.startswith("[--")] == [
        f"--{option.name}" for option in question_kind(command).options
    ]
    manifest = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yaml").read_text())
    hints = {c["command"]: c.get("usage_hint") for c in manifest["features"]["slash_commands"]}
    assert hints[f"/{command}"] == usage.removeprefix(f"/{command} ")


@pytest.mark.parametrize("kind", sorted(COMMAND_LINE.takes))
def test_each_command_is_answered_and_the_mcp_tool_gives_its_json(kind: str, graph: Snapshot) -> None:
    args = build_parser().parse_args([kind, *ASKED[kind]])
    answered = reply(args, graph, NOW, NOW, StalePolicy(), lag=lambda: judge([], NOW, StalePolicy()))
    assert answered.status == 0, answered.data
    assert answered.text(), f"{kind} printed nothing"
    json.dumps(answered.data)  # `--json` prints it
    if kind in tools.FRONT.takes and kind != LAG:  # lag's tool is `lag --json`, read from the store
        access = GraphAccess(lambda: graph, lambda: {}, lambda: NOW, now=NOW, viewer=EVERYONE)
        assert call_tool(access, question_kind(kind).tool, TOOL_ARGUMENTS[kind]) == answered.data


@pytest.mark.parametrize("command", sorted(slack_replies.SLASH_COMMANDS.takes))
def test_each_slash_command_is_answered_in_blocks(command: str, graph: Snapshot) -> None:
    deps = make_deps(snapshot=lambda: graph, clock=lambda: NOW)
    message = slack_replies.reply_to_command(deps, graph, command, "redis", EVERYONE)
    shown = json.dumps([block.to_dict() if hasattr(block, "to_dict") else block for block in message.blocks])
    assert "redis" in shown and "Usage" not in shown

"""The `oncall-graph` argument parser: global options before the command, as the contract says."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from bot.query.durations import parse_instant, parse_window
from bot.query.kinds import (
    ALERT,
    BLAST,
    GLANCE,
    LAG,
    NAME,
    QUESTION,
    QUESTION_KINDS,
    SUSPECTS,
    TWO_NAMES,
    QuestionKind,
    question_kind,
)
from bot.query.lookup import DRIFT_LIMIT
from sync.sources.kinds import SOURCE_KINDS, SourceKind


def _typed(parse: Callable[[str], object]) -> Callable[[str], object]:
    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    return convert


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise ValueError(f"expected a whole number >= 0, got {text[:40]!r}")
    return int(text)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise ValueError(f"expected a port number 0-65535, got {text[:40]!r}")
    return int(text)


def given_sources(args: argparse.Namespace, kinds: Sequence[SourceKind] = SOURCE_KINDS) -> list[tuple[str, str]]:
    """(kind, location) of each source option given, in the kinds' order."""
    given = []
    for kind in kinds:
        value = getattr(args, kind.dest)
        given += [(kind.name, location) for location in (value if kind.repeatable else [value] if value else [])]
    return given


# The command line's spelling of each option a question kind takes; its default is the kind's.
_OPTIONS: dict[str, dict[str, Any]] = {
    "since": {"type": _typed(parse_window), "help": "e.g. 6h, 30m, 2d"},
    "depth": {"type": _typed(_positive)},
    "limit": {
        "type": _typed(_count),
        "metavar": "N",
        "help": f"at most N of each list, the busiest first (default {DRIFT_LIMIT}; 0: all)",
    },
}
# Asked only by Slack: an alert (a watched channel, a PagerDuty webhook; the command line asks `suspects`)
# and a glance (an unfurl, App Home; the command line asks `blast-radius`).
NOT_COMMANDS = frozenset({ALERT, GLANCE})


def add_question(commands: Any, kind: QuestionKind) -> argparse.ArgumentParser:
    """One question kind's command: its subject as positionals, then its options."""
    sub: argparse.ArgumentParser = commands.add_parser(kind.name, help=kind.help)
    if kind.subject == NAME:
        sub.add_argument("name")
    elif kind.subject == TWO_NAMES:
        sub.add_argument("src", metavar="FROM")
        sub.add_argument("dst", metavar="TO")
    elif kind.subject == QUESTION:
        sub.add_argument("question")
    for option in kind.options:
        sub.add_argument(f"--{option.name}", default=option.default, **_OPTIONS[option.name])
    return sub


def question_commands(parser: argparse.ArgumentParser) -> frozenset[str]:
    """The question kinds this parser takes as commands: the command line's `Front.takes`."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return frozenset(name for name in commands.choices if name in {kind.name for kind in QUESTION_KINDS})


def build_parser(kinds: Sequence[SourceKind] = SOURCE_KINDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oncall-graph",
        description="Cited answers from the context graph. The query commands are an operator's tools: they see "
        "every entity, restricted ones included (`oncall-graph/visibility: restricted` limits Slack and the MCP "
        "server, see `mcp --help`).",
    )
    for kind in kinds:
        if kind.repeatable:
            parser.add_argument(kind.option, dest=kind.dest, action="append", default=[], metavar="SRC", help=kind.help)
        else:
            parser.add_argument(kind.option, dest=kind.dest, metavar="SRC", help=kind.help)
    parser.add_argument("--db", metavar="URL", help="SQLAlchemy URL (default sqlite:///oncall-graph.db)")
    parser.add_argument("--now", type=_typed(parse_instant), help="clock for time windows (ISO 8601)")
    parser.add_argument("--as-of", type=_typed(parse_instant), help="answer on the graph as it stood then")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # Every question kind is a command (lag after sync, where `--help` has always listed it).
    for question in QUESTION_KINDS:
        if question.name not in NOT_COMMANDS | {LAG}:
            add_question(commands, question)
    sync = commands.add_parser("sync", help="one sync of the configured sources into the database")
    sync.add_argument("--accept", metavar="SOURCE", action="append", default=[], help="apply a held change")
    add_question(commands, question_kind(LAG))
    commands.add_parser("migrate", help="bring the database schema to the latest revision, then exit")
    serve = commands.add_parser("serve", help="the Slack bot with the sync scheduler")
    serve.add_argument(
        "--metrics-port",
        type=_typed(_port),
        metavar="PORT",
        help="serve /metrics on this port of its own, not on PORT (default: ONCALL_GRAPH_METRICS_PORT)",
    )
    extract = commands.add_parser("extract", help="propose relations from documents with a model, held for review")
    extract.add_argument(
        "--docs",
        dest="extract_docs",
        action="append",
        default=[],
        metavar="PATH",
        help="runbook file or folder (default: --docs before the command, or ONCALL_GRAPH_DOCS)",
    )
    extract.add_argument("--yes", action="store_true", help="skip the confirmation (required without a terminal)")
    review = commands.add_parser("review", help="list extracted edges held for review, or approve/reject them")
    review.add_argument("decision", nargs="?", choices=("approve", "reject"), help="omit to list pending edges")
    review.add_argument("ids", nargs="*", type=_typed(_positive), metavar="ID")
    review.add_argument("--by", default="cli", metavar="NAME", help="the reviewer recorded in the audit")
    for sub in (commands.choices[BLAST], commands.choices[SUSPECTS]):
        sub.add_argument("--png", metavar="FILE", help="also draw the answer as a PNG (needs Graphviz `dot`)")
    for name, sub in commands.choices.items():
        if name != "serve":
            sub.add_argument("--json", action="store_true", help="machine-readable output")
    # Added after the --json loop: its output is the MCP protocol itself.
    mcp = commands.add_parser(
        "mcp",
        help="the graph's query tools for an agent: an MCP server on stdio, answering as a viewer",
        description="Answers as the Slack user or channel given (restricted entities they may not see stay "
        "hidden), as an outsider when neither is given, and sees everything only with --all. The other "
        "commands are an operator's tools and always see everything.",
    )
    mcp.add_argument("--as-user", metavar="ID", help="answer as this Slack user id (ONCALL_GRAPH_MCP_AS_USER)")
    mcp.add_argument("--as-channel", metavar="ID", help="answer as this Slack channel id (ONCALL_GRAPH_MCP_AS_CHANNEL)")
    mcp.add_argument("--all", action="store_true", help="answer as an operator: restricted entities shown too")
    return parser

"""The `oncall-graph` argument parser: global options before the command, as the contract says."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from datetime import timedelta

from bot.query.durations import parse_instant, parse_window
from bot.query.lookup import DRIFT_LIMIT
from sync.sources.kinds import SOURCE_KINDS, SourceKind

QUERY_COMMANDS = frozenset({"blast-radius", "suspects", "path", "resolve", "ask", "lint", "drift"})


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

    blast = commands.add_parser("blast-radius", help="what breaks if NAME goes down")
    blast.add_argument("name")
    blast.add_argument("--depth", type=_typed(_positive), default=None)
    suspect = commands.add_parser("suspects", help="the on-call view of an alert on NAME")
    suspect.add_argument("name")
    suspect.add_argument("--since", type=_typed(parse_window), default=timedelta(hours=6), help="e.g. 6h, 30m, 2d")
    suspect.add_argument("--depth", type=_typed(_positive), default=2)
    path = commands.add_parser("path", help="the shortest cited chain between two entities")
    path.add_argument("src", metavar="FROM")
    path.add_argument("dst", metavar="TO")
    commands.add_parser("resolve", help="the canonical entity for a name").add_argument("name")
    commands.add_parser("ask", help="a free-text question").add_argument("question")
    commands.add_parser("lint", help="the hygiene report")
    drift = commands.add_parser(
        "drift", help="where the catalog and the traffic disagree, and how much the graph can know"
    )
    drift.add_argument(
        "--limit",
        type=_typed(_count),
        default=DRIFT_LIMIT,
        metavar="N",
        help=f"at most N of each list, the busiest first (default {DRIFT_LIMIT}; 0: all)",
    )
    sync = commands.add_parser("sync", help="one sync of the configured sources into the database")
    sync.add_argument("--accept", metavar="SOURCE", action="append", default=[], help="apply a held change")
    commands.add_parser("lag", help="how fresh each source is")
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
    for sub in (blast, suspect):
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

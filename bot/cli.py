"""The `oncall-graph` command line: a composition root wiring settings, sources, the graph and output.

Exit status: 0 answered; 1 the name did not resolve (suggestions printed); 2 bad usage or no
usable input at all.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console
from rich.text import Text

from bot import render_json, render_text
from bot.durations import parse_instant, parse_window
from bot.settings import Settings
from graph.ask import ask
from graph.blast import blast_radius
from graph.build import build_snapshot
from graph.facts import SourceFacts, SourceMark
from graph.hygiene import lint
from graph.names import Resolution, resolve
from graph.paths import find_path
from graph.snapshot import Snapshot
from graph.suspects import suspects
from sync.sources import SourceRead, SourceSpec, read_sources

EXIT_OK, EXIT_UNRESOLVED, EXIT_USAGE = 0, 1, 2
MAX_WARNINGS = 50
SOURCE_OPTIONS = (
    ("catalog", "catalog", "Backstage descriptor file, folder or catalog API URL"),
    ("deploys", "deploys", "deploy feed: JSON Lines file or URL"),
    ("docs", "docs", "runbook file or folder"),
    ("untrusted-docs", "untrusted_docs", "outside documents: their edges are held for review"),
    ("triples", "triples", "triples JSON file"),
    ("aliases", "aliases", "aliases YAML file"),
)


class UsageError(Exception):
    """Bad usage or no usable input: exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="oncall-graph", description="Cited answers from the context graph.")
    for flag, dest, help_text in SOURCE_OPTIONS:
        parser.add_argument(f"--{flag}", dest=dest, action="append", default=[], metavar="SRC", help=help_text)
    parser.add_argument("--now", type=_instant, help="clock for time windows (ISO 8601; default: now)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    blast = commands.add_parser("blast-radius", help="what breaks if NAME goes down")
    blast.add_argument("name")
    blast.add_argument("--depth", type=_positive, default=None)
    suspect = commands.add_parser("suspects", help="the on-call view of an alert on NAME")
    suspect.add_argument("name")
    suspect.add_argument("--since", type=_window, default=timedelta(hours=6), help="window, e.g. 6h, 30m, 2d")
    suspect.add_argument("--depth", type=_positive, default=2)
    path = commands.add_parser("path", help="the shortest cited chain between two entities")
    path.add_argument("src", metavar="FROM")
    path.add_argument("dst", metavar="TO")
    commands.add_parser("resolve", help="the canonical entity for a name").add_argument("name")
    commands.add_parser("ask", help="a free-text question").add_argument("question")
    commands.add_parser("lint", help="the hygiene report")
    for sub in commands.choices.values():
        sub.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def _instant(text: str) -> datetime:
    try:
        return parse_instant(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _window(text: str) -> timedelta:
    try:
        return parse_window(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of hops >= 1, got {text!r}")
    return int(text)


def source_specs(args: argparse.Namespace, settings: Settings) -> list[SourceSpec]:
    """Sources from the command line when any are given, else from the environment and `.env`."""
    given = [SourceSpec(flag, loc) for flag, dest, _ in SOURCE_OPTIONS for loc in getattr(args, dest)]
    if given:
        return given
    return [SourceSpec(flag, loc) for flag, dest, _ in SOURCE_OPTIONS for loc in settings.sources(dest)]


def load_snapshot(specs: Sequence[SourceSpec], clock: Callable[[], datetime], err: Console) -> Snapshot:
    if not specs:
        raise UsageError(
            "no sources: give --catalog, --deploys, --docs, --triples or --aliases, "
            "or set ONCALL_GRAPH_CATALOG and friends"
        )
    reads = read_sources(specs, clock)
    _report_problems(reads, err)
    usable: list[SourceFacts] = [r.facts for r in reads if r.facts is not None]
    if not usable:
        raise UsageError("no usable input: every source failed")
    return build_snapshot(usable, built_at=clock(), marks={r.spec.name: _mark(r) for r in reads})


def _mark(read: SourceRead) -> SourceMark:
    return SourceMark(
        read.spec.name,
        last_success=None if read.error else read.read_at,
        last_error=read.error,
        last_attempt=read.read_at,
    )


def _report_problems(reads: Sequence[SourceRead], err: Console) -> None:
    for read in reads:
        if read.error:
            err.print(Text(f"error: source {read.spec.name} could not be read: {read.error}", style="bold red"))
    problems = [p for r in reads if r.facts for p in r.facts.problems]
    for problem in problems[:MAX_WARNINGS]:
        err.print(Text(str(problem), style="yellow"))
    if len(problems) > MAX_WARNINGS:
        err.print(f"… and {len(problems) - MAX_WARNINGS} more problems (oncall-graph lint lists them all)")


def _resolved(snapshot: Snapshot, name: str) -> Resolution:
    return resolve(snapshot.aliases, name)


def run(args: argparse.Namespace, snapshot: Snapshot, now: datetime, wall: datetime) -> tuple[int, Any, list[Text]]:
    """(exit status, JSON value, text lines) for one command on one snapshot."""
    command = args.command
    if command == "lint":
        report = lint(snapshot)
        return EXIT_OK, render_json.lint_json(report), render_text.render_lint(report)
    if command == "ask":
        answer = ask(snapshot, args.question, now=now)
        return (
            (EXIT_OK if answer.entities else EXIT_UNRESOLVED),
            render_json.ask_json(answer),
            render_text.render_answer(answer),
        )
    if command == "path":
        return _run_path(snapshot, args)
    resolution = _resolved(snapshot, args.name)
    if command == "resolve":
        status = EXIT_OK if resolution.entity else EXIT_UNRESOLVED
        return status, render_json.resolve_json(resolution), render_text.render_resolution(resolution)
    if resolution.entity is None:
        return (
            EXIT_UNRESOLVED,
            render_json.unresolved_json(args.name, resolution),
            render_text.render_unresolved(resolution),
        )
    header = [render_text.graph_header(snapshot, wall)]
    if command == "blast-radius":
        result = blast_radius(snapshot, resolution.entity, max_depth=args.depth)
        return EXIT_OK, render_json.blast_json(args.name, result), header + render_text.render_blast(result)
    found = suspects(snapshot, resolution.entity, now=now, window=args.since, max_depth=args.depth)
    return EXIT_OK, render_json.suspects_json(args.name, found), header + render_text.render_suspects(found)


def _run_path(snapshot: Snapshot, args: argparse.Namespace) -> tuple[int, Any, list[Text]]:
    ends = [_resolved(snapshot, args.src), _resolved(snapshot, args.dst)]
    for resolution in ends:
        if resolution.entity is None:
            data: dict[str, Any] = {"from": ends[0].entity, "to": ends[1].entity, "path": [], "edges": []}
            data["unresolved"] = render_json.unresolved_json(resolution.query, resolution)
            return EXIT_UNRESOLVED, data, render_text.render_unresolved(resolution)
    result = find_path(snapshot, ends[0].entity or "", ends[1].entity or "")
    return EXIT_OK, render_json.path_json(result), render_text.render_path(result)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out, err = Console(soft_wrap=True, highlight=False), Console(stderr=True, soft_wrap=True, highlight=False)
    wall = datetime.now(UTC)
    now = args.now or wall
    try:
        snapshot = load_snapshot(source_specs(args, Settings()), lambda: datetime.now(UTC), err)
    except UsageError as exc:
        err.print(Text(f"oncall-graph: {exc}", style="bold red"))
        return EXIT_USAGE
    status, data, lines = run(args, snapshot, now, wall)
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        for line in lines:
            out.print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())

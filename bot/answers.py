"""One query command on one snapshot: (exit status, JSON value, text lines). Pure."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from rich.text import Text

from bot import render_json, render_text
from graph.ask import ask
from graph.blast import blast_radius
from graph.hygiene import lint
from graph.names import resolve
from graph.passages import blast_entities, cite_passages, suspects_entities
from graph.paths import find_path
from graph.snapshot import Snapshot
from graph.suspects import suspects

EXIT_OK, EXIT_UNRESOLVED, EXIT_USAGE = 0, 1, 2
Outcome = tuple[int, Any, list[Text]]


def answer(args: argparse.Namespace, snapshot: Snapshot, now: datetime, wall: datetime) -> Outcome:
    command = args.command
    if command == "lint":
        report = lint(snapshot)
        return EXIT_OK, render_json.lint_json(report), render_text.render_lint(report)
    if command == "ask":
        found = ask(snapshot, args.question, now=now)
        status = EXIT_OK if found.entities else EXIT_UNRESOLVED
        return status, render_json.ask_json(found), render_text.render_answer(found)
    if command == "path":
        return _path(snapshot, args)
    resolution = resolve(snapshot.aliases, args.name)
    if command == "resolve":
        status = EXIT_OK if resolution.entity else EXIT_UNRESOLVED
        return status, render_json.resolve_json(resolution), render_text.render_resolution(resolution)
    if resolution.entity is None:
        unresolved = render_json.unresolved_json(args.name, resolution)
        return EXIT_UNRESOLVED, unresolved, render_text.render_unresolved(resolution)
    header = [render_text.graph_header(snapshot, wall)]
    if command == "blast-radius":
        result = blast_radius(snapshot, resolution.entity, max_depth=args.depth)
        quoted = cite_passages(snapshot, blast_entities(result))
        data = render_json.blast_json(args.name, result) | {"graph": render_json.graph_json(snapshot, wall)}
        data["passages"] = render_json.passages_json(quoted)
        return EXIT_OK, data, header + render_text.render_blast(result) + render_text.render_passages(quoted)
    found_suspects = suspects(snapshot, resolution.entity, now=now, window=args.since, max_depth=args.depth)
    quoted = cite_passages(snapshot, suspects_entities(found_suspects))
    data = render_json.suspects_json(args.name, found_suspects) | {"graph": render_json.graph_json(snapshot, wall)}
    data["passages"] = render_json.passages_json(quoted)
    lines = header + render_text.render_suspects(found_suspects) + render_text.render_passages(quoted)
    return EXIT_OK, data, lines


def _path(snapshot: Snapshot, args: argparse.Namespace) -> Outcome:
    ends = [resolve(snapshot.aliases, args.src), resolve(snapshot.aliases, args.dst)]
    for resolution in ends:
        if resolution.entity is None:
            data: dict[str, Any] = {"from": ends[0].entity, "to": ends[1].entity, "path": [], "edges": []}
            data["unresolved"] = render_json.unresolved_json(resolution.query, resolution)
            return EXIT_UNRESOLVED, data, render_text.render_unresolved(resolution)
    result = find_path(snapshot, ends[0].entity or "", ends[1].entity or "")
    return EXIT_OK, render_json.path_json(result), render_text.render_path(result)

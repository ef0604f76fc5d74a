"""One query command on one snapshot: (exit status, JSON value, text lines). Pure, except that `ask`
with a model given calls it (to read the question and phrase the graph's answer).

Each query command has one `*_reply` function; the command line and the MCP server both call it, so a
tool answers with exactly the JSON value that `--json` prints.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from rich.text import Text

from bot.query.asking import Asked, ModelPorts, ask_question
from bot.render import json as render_json
from bot.render import text as render_text
from bot.render.dot import Picture, blast_dot, suspects_dot
from graph.blast import blast_radius
from graph.hygiene import lint
from graph.names import Resolution, resolve
from graph.passages import CitedPassage, cite_passages
from graph.paths import find_path
from graph.snapshot import Snapshot
from graph.suspects import suspects

EXIT_OK, EXIT_UNRESOLVED, EXIT_USAGE = 0, 1, 2
Outcome = tuple[int, Any, list[Text]]


@dataclass(frozen=True, slots=True)
class Reply:
    """One answered query; its terminal text is rendered only when asked for (JSON callers never are)."""

    status: int
    data: dict[str, Any]
    text: Callable[[], list[Text]]

    def outcome(self) -> Outcome:
        return self.status, self.data, self.text()


def answer(
    args: argparse.Namespace, snapshot: Snapshot, now: datetime, wall: datetime, model: ModelPorts | None = None
) -> Outcome:
    command = args.command
    if command == "lint":
        report = lint(snapshot)
        return EXIT_OK, render_json.lint_json(report), render_text.render_lint(report)
    if command == "ask":
        asked = ask_question(snapshot, args.question, now=now, model=model, purpose="ask")
        found = asked.answer
        status = EXIT_OK if found.entities else EXIT_UNRESOLVED
        data = render_json.ask_json(found) | phrasing_json(asked)
        return status, data, render_text.render_answer(found, asked.phrasing)
    if command == "path":
        return path_reply(snapshot, args.src, args.dst).outcome()
    if command == "resolve":
        return resolve_reply(snapshot, args.name).outcome()
    if command == "blast-radius":
        return blast_reply(snapshot, args.name, depth=args.depth, wall=wall).outcome()
    return suspects_reply(snapshot, args.name, since=args.since, depth=args.depth, now=now, wall=wall).outcome()


def picture(args: argparse.Namespace, snapshot: Snapshot, now: datetime) -> Picture | None:
    """The DOT picture of a blast-radius or suspects answer: the same query again (walks are cheap)."""
    resolution = resolve(snapshot.aliases, args.name)
    if resolution.entity is None:
        return None
    if args.command == "blast-radius":
        return blast_dot(blast_radius(snapshot, resolution.entity, max_depth=args.depth))
    found = suspects(snapshot, resolution.entity, now=now, window=args.since, max_depth=args.depth)
    return suspects_dot(found, snapshot)


def resolve_reply(snapshot: Snapshot, name: str) -> Reply:
    resolution = resolve(snapshot.aliases, name)
    status = EXIT_OK if resolution.entity else EXIT_UNRESOLVED
    return Reply(status, render_json.resolve_json(resolution), lambda: render_text.render_resolution(resolution))


def _unresolved(name: str, resolution: Resolution) -> Reply:
    data = render_json.unresolved_json(name, resolution)
    return Reply(EXIT_UNRESOLVED, data, partial(render_text.render_unresolved, resolution))


def blast_reply(snapshot: Snapshot, name: str, *, depth: int | None, wall: datetime) -> Reply:
    resolution = resolve(snapshot.aliases, name)
    if resolution.entity is None:
        return _unresolved(name, resolution)
    result = blast_radius(snapshot, resolution.entity, max_depth=depth)
    quoted = cite_passages(snapshot, result.subjects())
    data = render_json.blast_json(name, result)
    return _answered(snapshot, wall, data, quoted, lambda: render_text.render_blast(result))


def suspects_reply(
    snapshot: Snapshot, name: str, *, since: timedelta, depth: int, now: datetime, wall: datetime
) -> Reply:
    resolution = resolve(snapshot.aliases, name)
    if resolution.entity is None:
        return _unresolved(name, resolution)
    found = suspects(snapshot, resolution.entity, now=now, window=since, max_depth=depth)
    quoted = cite_passages(snapshot, found.subjects())
    data = render_json.suspects_json(name, found)
    return _answered(snapshot, wall, data, quoted, lambda: render_text.render_suspects(found))


def _answered(
    snapshot: Snapshot, wall: datetime, data: dict[str, Any], quoted: Sequence[CitedPassage],
    body: Callable[[], list[Text]],
) -> Reply:  # fmt: skip
    """An answer with the graph's age and the runbook passages it quotes, in JSON and in text."""
    data = data | {"graph": render_json.graph_json(snapshot, wall), "passages": render_json.passages_json(quoted)}
    text = lambda: [render_text.graph_header(snapshot, wall), *body(), *render_text.render_passages(quoted)]  # noqa: E731
    return Reply(EXIT_OK, data, text)


def path_reply(snapshot: Snapshot, src: str, dst: str) -> Reply:
    ends = [resolve(snapshot.aliases, src), resolve(snapshot.aliases, dst)]
    for resolution in ends:
        if resolution.entity is None:
            data: dict[str, Any] = {"from": ends[0].entity, "to": ends[1].entity, "path": [], "edges": []}
            data["unresolved"] = render_json.unresolved_json(resolution.query, resolution)
            return Reply(EXIT_UNRESOLVED, data, partial(render_text.render_unresolved, resolution))
    result = find_path(snapshot, ends[0].entity or "", ends[1].entity or "")
    return Reply(EXIT_OK, render_json.path_json(result), lambda: render_text.render_path(result))


def phrasing_json(asked: Asked) -> dict[str, Any]:
    """Additive `ask --json` keys: which model phrased the answer (null: the graph's own sentences)."""
    phrasing = asked.phrasing
    return {
        "phrased_by": phrasing.model if phrasing else None,
        "phrased": phrasing.text if phrasing else None,
        "phrased_cites": list(phrasing.cited) if phrasing else [],
        "model_fallback": asked.fallback or None,
    }

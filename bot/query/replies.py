"""One query command on one snapshot, for the command line and the MCP server: the question kind's
answer bundle, rendered as (exit status, JSON value, text lines). Pure, except that `ask` with a
model given calls it.

The command line and the MCP server both call these, so a tool answers with exactly the JSON value
that `--json` prints; neither computes anything of its own.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.text import Text

from bot.query.ask import answer_ask
from bot.query.blast import answer_blast, answer_suspects
from bot.query.bundle import (
    AskAnswer,
    BlastAnswer,
    BlastQuery,
    PathAnswer,
    ResolveAnswer,
    SuspectsAnswer,
    SuspectsQuery,
)
from bot.query.live import LiveSource
from bot.query.lookup import answer_drift, answer_lint, answer_path, answer_resolve
from bot.query.model_phrasing import ModelPorts
from bot.render import json as render_json
from bot.render import text as render_text
from bot.render.dot import Picture, blast_dot, suspects_dot
from bot.render.freshness import Freshness
from graph.exposure.passages import CitedPassage
from graph.exposure.visibility import EVERYONE
from graph.health.freshness import StalePolicy
from graph.snapshot import Snapshot

EXIT_OK, EXIT_UNRESOLVED, EXIT_USAGE = 0, 1, 2
Outcome = tuple[int, Any, list[Text]]


@dataclass(frozen=True, slots=True)
class Reply:
    """One answered query; its terminal text is rendered only when asked for (JSON callers never are)."""

    status: int
    data: dict[str, Any]
    text: Callable[[], list[Text]]
    picture: Callable[[], Picture | None] = lambda: None

    def outcome(self) -> Outcome:
        return self.status, self.data, self.text()


def reply(
    args: argparse.Namespace,
    snapshot: Snapshot,
    now: datetime,
    wall: datetime,
    policy: StalePolicy,
    model: ModelPorts | None = None,
    live: LiveSource | None = None,
) -> Reply:
    """The command line sees everything (an operator's tool); `now` moves windows, `wall` judges freshness;
    `live` looks at the present for blast-radius, suspects and ask."""
    command = args.command
    if command == "lint":
        report = answer_lint(snapshot, EVERYONE, wall, policy).report
        return Reply(EXIT_OK, render_json.lint_json(report), lambda: render_text.render_lint(report))
    if command == "drift":
        drifted = answer_drift(snapshot, EVERYONE, wall, policy, limit=args.limit).report
        return Reply(EXIT_OK, render_json.drift_json(drifted), lambda: render_text.render_drift(drifted))
    if command == "ask":
        return ask_reply(answer_ask(snapshot, args.question, EVERYONE, now, policy, model, wall=wall, live=live))
    if command == "path":
        return path_reply(answer_path(snapshot, (args.src, args.dst), EVERYONE, wall, policy))
    if command == "resolve":
        return resolve_reply(answer_resolve(snapshot, args.name, EVERYONE, wall, policy))
    if command == "blast-radius":
        return blast_reply(answer_blast(snapshot, BlastQuery(args.name, args.depth), EVERYONE, wall, policy, live))
    query = SuspectsQuery(args.name, since=args.since, depth=args.depth, at=now)
    return suspects_reply(answer_suspects(snapshot, query, EVERYONE, wall, policy, live), snapshot)


def resolve_reply(bundle: ResolveAnswer) -> Reply:
    resolution = bundle.resolved.resolution
    status = EXIT_OK if resolution.entity else EXIT_UNRESOLVED
    return Reply(status, render_json.resolve_json(resolution), lambda: render_text.render_resolution(resolution))


def blast_reply(bundle: BlastAnswer) -> Reply:
    result, resolution = bundle.result, bundle.resolved.resolution
    if result is None:
        data = render_json.unresolved_json(bundle.query.name, resolution)
        return Reply(EXIT_UNRESOLVED, data, lambda: render_text.render_unresolved(resolution))
    data = render_json.blast_json(bundle.query.name, result, bundle.live)
    body = lambda: render_text.render_blast(result, bundle.live)  # noqa: E731
    return _answered(bundle.freshness, data, bundle.passages, body, lambda: blast_dot(result))


def suspects_reply(bundle: SuspectsAnswer, snapshot: Snapshot) -> Reply:
    """`snapshot` only names the owners the picture labels."""
    found, resolution = bundle.result, bundle.resolved.resolution
    if found is None:
        data = render_json.unresolved_json(bundle.query.name, resolution)
        return Reply(EXIT_UNRESOLVED, data, lambda: render_text.render_unresolved(resolution))
    data = render_json.suspects_json(bundle.query.name, found, bundle.live)
    body = lambda: render_text.render_suspects(found, bundle.live)  # noqa: E731
    return _answered(bundle.freshness, data, bundle.passages, body, lambda: suspects_dot(found, snapshot))


def _answered(
    freshness: Freshness, data: dict[str, Any], quoted: tuple[CitedPassage, ...], body: Callable[[], list[Text]],
    picture: Callable[[], Picture | None],
) -> Reply:  # fmt: skip
    """An answer with the graph's age, its stale warning and the runbook passages it quotes."""
    data = data | {"graph": render_json.graph_json(freshness), "passages": render_json.passages_json(quoted)}

    def text() -> list[Text]:
        head = [render_text.graph_header(freshness), *render_text.stale_lines(freshness)]
        return [*head, *body(), *render_text.render_passages(quoted)]

    return Reply(EXIT_OK, data, text, picture)


def path_reply(bundle: PathAnswer) -> Reply:
    src, dst = bundle.ends
    unresolved, result = bundle.unresolved, bundle.result
    if unresolved is not None or result is None:
        resolution = (unresolved or src).resolution
        data: dict[str, Any] = {"from": src.entity, "to": dst.entity, "path": [], "edges": []}
        data["unresolved"] = render_json.unresolved_json(resolution.query, resolution)
        return Reply(EXIT_UNRESOLVED, data, lambda: render_text.render_unresolved(resolution))
    data = render_json.path_json(result)  # the contract's shape, compared byte for byte with the MCP tool's
    freshness = bundle.freshness
    text = lambda: [*render_text.stale_lines(freshness), *render_text.render_path(result)]  # noqa: E731
    return Reply(EXIT_OK, data, text)


def ask_reply(bundle: AskAnswer) -> Reply:
    """Exit 0 when answered, about named entities or the whole graph ("what got deployed in the last 2
    hours?"); 1 when a name the question types resolves to no one entity (its suggestions are in the
    notes), or when it names nothing answerable (the notes say what can be asked)."""
    found = bundle.answer
    status = EXIT_OK if found.sections and not found.unresolved else EXIT_UNRESOLVED
    data = render_json.ask_json(found) | phrasing_json(bundle) | {"graph": render_json.graph_json(bundle.freshness)}
    if bundle.live.configured:  # the live lines are in its impact and dependency sections
        data["live"] = render_json.live_json(bundle.live)
    freshness = bundle.freshness
    text = lambda: [*render_text.stale_lines(freshness), *render_text.render_answer(found, bundle.phrasing)]  # noqa: E731
    return Reply(status, data, text)


def phrasing_json(bundle: AskAnswer) -> dict[str, Any]:
    """Additive `ask --json` keys: which model phrased the answer (null: the graph's own sentences)."""
    phrasing = bundle.phrasing
    return {
        "phrased_by": phrasing.model if phrasing else None,
        "phrased": phrasing.text if phrasing else None,
        "phrased_cites": list(phrasing.cited) if phrasing else [],
        "model_fallback": bundle.fallback or None,
    }

"""One question on one snapshot, for the command line and the MCP server: the question kind's
answer bundle (`bot/query/kinds.py`), rendered as (exit status, JSON value, text lines) by `REPLIES`,
the renderer table of these fronts. Pure, except that `ask` with a model given calls it.

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

from bot.query.bundle import (
    AskAnswer,
    BlastAnswer,
    DriftAnswer,
    LintAnswer,
    PathAnswer,
    ResolveAnswer,
    SuspectsAnswer,
)
from bot.query.kinds import (
    ASK,
    BLAST,
    DRIFT,
    LAG,
    LINT,
    PATH,
    RESOLVE,
    SUSPECTS,
    TWO_NAMES,
    Ground,
    Question,
    answer,
    question_kind,
)
from bot.query.live import LiveSource
from bot.query.model_phrasing import ModelPorts
from bot.render import json as render_json
from bot.render import text as render_text
from bot.render.dot import Picture, blast_dot, suspects_dot
from bot.render.freshness import Freshness
from graph.exposure.passages import CitedPassage
from graph.exposure.visibility import EVERYONE
from graph.health.freshness import LagReport, StalePolicy
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
    snapshot: Snapshot | None,
    now: datetime,
    wall: datetime,
    policy: StalePolicy,
    model: ModelPorts | None = None,
    live: LiveSource | None = None,
    lag: Callable[[], LagReport] | None = None,
) -> Reply:
    """The command line sees everything (an operator's tool); `now` moves windows, `wall` judges freshness;
    `live` looks at the present for the kinds that do; `lag` judges the sources' marks (lag only)."""
    ground = Ground(EVERYONE, wall, policy, snapshot, now, model, live, lag=lag)
    return answered(command_question(args), ground)


def answered(question: Question, ground: Ground) -> Reply:
    """The kind's bundle, rendered for the command line, `--json` and the MCP tools."""
    return REPLIES[question.kind](answer(question, ground), ground)


def command_question(args: argparse.Namespace) -> Question:
    """The question a parsed command line asks (`bot/cli/parser.py` builds its commands from the kinds)."""
    kind = question_kind(args.command)
    name, other = (args.src, args.dst) if kind.subject == TWO_NAMES else (getattr(args, "name", ""), "")
    since, depth, limit = (getattr(args, option, None) for option in ("since", "depth", "limit"))
    return Question(kind.name, name, other, getattr(args, "question", ""), since=since, depth=depth, limit=limit)


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


def lag_reply(report: LagReport) -> Reply:
    data = render_json.lag_json(report)
    return Reply(EXIT_OK, data, lambda: lag_lines(data))


def lag_lines(data: dict[str, Any]) -> list[Text]:
    lines = []
    for s in data["sources"]:
        if s.get("pushed"):
            lines.append(_pushed_lag_line(s))
            continue
        age = "never synced" if s["age_seconds"] is None else render_text.format_age(s["age_seconds"])
        style = "bold red" if s["stale"] else "green"
        threshold = s["threshold_seconds"]
        limit = "" if threshold is None else f" (limit {render_text.format_age(threshold)})"
        extra = f"  last error: {s['last_error']}" if s["last_error"] else ""
        held = f"  held for review: {s['held']}" if s["held"] else ""
        lines.append(Text(f"{s['state'].upper():>7}  {s['name']}  age {age}{limit}{extra}{held}", style=style))
        lines += [Text(f"         {problem}", style="yellow") for problem in s["problems"]]
        lines += render_text.render_read_problems(s["read_problems"])
    lines.append(Text("graph is stale" if data["stale"] else "all sources fresh", style="bold"))
    return lines


def _pushed_lag_line(s: dict[str, Any]) -> Text:
    last = "no event yet" if s["age_seconds"] is None else f"last event {render_text.format_age(s['age_seconds'])} ago"
    limit = "off" if s["threshold_seconds"] is None else render_text.format_age(s["threshold_seconds"])
    refused = s["last_refused"]  # after the sender proved itself; unproven ones live in the server's memory only
    why = f"  last authenticated delivery refused {refused['at']}: {refused['why']}" if refused else ""
    flag, style = ("STALE", "bold red") if s["stale"] else ("ok", "green")
    return Text(f"{flag:>5}  {s['name']} (pushed)  {last}, limit {limit}{why}", style=style)


def lint_reply(bundle: LintAnswer) -> Reply:
    report = bundle.report
    return Reply(EXIT_OK, render_json.lint_json(report), lambda: render_text.render_lint(report))


def drift_reply(bundle: DriftAnswer) -> Reply:
    drifted = bundle.report
    return Reply(EXIT_OK, render_json.drift_json(drifted), lambda: render_text.render_drift(drifted))


def phrasing_json(bundle: AskAnswer) -> dict[str, Any]:
    """Additive `ask --json` keys: which model phrased the answer (null: the graph's own sentences)."""
    phrasing = bundle.phrasing
    return {
        "phrased_by": phrasing.model if phrasing else None,
        "phrased": phrasing.text if phrasing else None,
        "phrased_cites": list(phrasing.cited) if phrasing else [],
        "model_fallback": bundle.fallback or None,
    }


Renderer = Callable[[Any, Ground], Reply]  # (the kind's bundle, where it was asked) -> its reply

# The command line's (and `--json`'s, and the MCP tools') renderer of each kind it takes.
REPLIES: dict[str, Renderer] = {
    BLAST: lambda bundle, ground: blast_reply(bundle),
    SUSPECTS: lambda bundle, ground: suspects_reply(bundle, ground.graph),
    PATH: lambda bundle, ground: path_reply(bundle),
    RESOLVE: lambda bundle, ground: resolve_reply(bundle),
    ASK: lambda bundle, ground: ask_reply(bundle),
    LINT: lambda bundle, ground: lint_reply(bundle),
    DRIFT: lambda bundle, ground: drift_reply(bundle),
    LAG: lambda report, ground: lag_reply(report),
}

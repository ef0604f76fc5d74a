"""What the bot answers to a command, a mention or an alert, as a SlackMessage: parse the arguments, ask
the question kind (`bot/query/kinds.py`), render its bundle through this front's table.

No Slack client here: handlers deliver the message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bot.query.bundle import SUSPECTS_DEPTH, AlertAnswer, AskAnswer, BlastAnswer, Resolved, SuspectsAnswer
from bot.query.durations import check_window
from bot.query.kinds import ALERT, ASK, BLAST, SUSPECTS, Front, Ground, Question, answer
from bot.query.model_phrasing import ModelPorts
from bot.render.dot import alert_dot, blast_dot, suspects_dot, view_dot
from bot.render.wording import window_token
from bot.slack.arguments import USAGE, CommandArgsError, parse_command
from bot.slack.blocks.messages import (
    SlackMessage,
    format_alert_reply,
    format_answer,
    format_blast_radius,
    format_refusal,
    format_suspects,
    format_unresolved,
)
from bot.slack.deps import BotDeps
from bot.telemetry.instrument import note_counts, note_entities
from bot.telemetry.tracing import stage_span
from graph.exposure.visibility import Viewer
from graph.questions.wording import typed_window
from graph.snapshot import Snapshot

LOADING = "The graph is still loading; try again in a minute."


def reply_to_command(
    deps: BotDeps, snapshot: Snapshot | None, command: str, text: str, viewer: Viewer, *, shared: bool = False
) -> SlackMessage:
    """Parse the command's text, ask the query layer, render its bundle: the CPU work in `deps.work_slots`."""
    if snapshot is None:
        return format_refusal(LOADING)
    try:
        args = parse_command(command, text)
    except CommandArgsError as exc:
        return format_refusal(f"/{command}: {exc}. Usage: {USAGE[command]}")
    if not args.name:
        return format_refusal(f"Usage: {USAGE[command]}")
    # The walk and the rendering each in a work slot; the wait for the live part between them in none.
    bundle = answer(Question(command, args.name, since=args.since, depth=args.depth), ground(deps, snapshot, viewer))
    with deps.work_slots, stage_span("rendering"):
        return SLASH_REPLIES[command](deps, bundle, snapshot, shared)


def ground(deps: BotDeps, snapshot: Snapshot, viewer: Viewer, *, purpose: str = "ask") -> Ground:
    """Where Slack asks: the bot's clock, stale policy, model and live port; the graph's parts in work slots."""
    return Ground(viewer, deps.clock(), deps.stale_policy, snapshot, model=model_ports(deps), live=deps.live,
                  cpu=deps.work_slots, purpose=purpose)  # fmt: skip


def unresolved_message(
    deps: BotDeps, command: str, name: str, resolved: Resolved, args: dict[str, object] | None = None
) -> SlackMessage:
    """No entity of that name (or several): each suggestion a button that reruns the command with `args`."""
    deps.metrics.unresolved_name(command, name)  # hidden or unknown, counted alike
    return format_unresolved(name, resolved.resolution, command=command, args=args)


def blast_message(deps: BotDeps, bundle: BlastAnswer, *, shared: bool) -> SlackMessage:
    result = bundle.result
    if result is None:
        depth = bundle.query.depth
        return unresolved_message(deps, BLAST, bundle.query.name, bundle.resolved, {"depth": depth} if depth else None)
    note_entities(result.failed)
    note_counts(impacted=result.impacted_count)
    message = format_blast_radius(result, bundle.freshness, shared=shared, passages=bundle.passages, live=bundle.live)
    return replace(message, draw_picture=lambda: blast_dot(result))


def suspects_message(deps: BotDeps, bundle: SuspectsAnswer, snapshot: Snapshot, *, shared: bool) -> SlackMessage:
    """`snapshot` only names the owners the picture labels."""
    found = bundle.result
    if found is None:
        query = bundle.query
        args: dict[str, object] = {"since": window_token(query.since)}
        args |= {"depth": query.depth} if query.depth != SUSPECTS_DEPTH else {}
        return unresolved_message(deps, SUSPECTS, query.name, bundle.resolved, args)
    note_entities(found.entity)
    note_counts(dependencies=len(found.dependencies))
    message = format_suspects(found, bundle.freshness, shared=shared, passages=bundle.passages, live=bundle.live)
    return replace(message, draw_picture=lambda: suspects_dot(found, snapshot))


def mention_message(bundle: AskAnswer, snapshot: Snapshot) -> SlackMessage:
    """`snapshot` only names the owners the picture labels."""
    note_entities(*bundle.answer.entities)
    note_counts(edges=len(bundle.answer.edges))
    message = format_answer(bundle.answer, bundle.freshness, phrasing=bundle.phrasing)
    return replace(message, draw_picture=lambda: view_dot(bundle.view(), snapshot))


def window_refusal(question: str) -> SlackMessage | None:
    """A mention whose window is outside 1 minute … 1 year is told the range, in the words the
    slash command uses, rather than answered on a window it did not ask for."""
    typed = typed_window(question)
    if typed is None:
        return None
    try:
        check_window(typed[1], typed[0])
    except ValueError as exc:
        return format_refusal(f"{exc}.")
    return None


def model_ports(deps: BotDeps) -> ModelPorts:
    return ModelPorts(deps.explainer, deps.reader, deps.metrics)


def alert_message(deps: BotDeps, bundle: AlertAnswer, snapshot: Snapshot, *, metric: str) -> SlackMessage:
    """The alert thread's reply, and the body of a PagerDuty webhook's post: one rendering of one bundle."""
    found, impact = bundle.suspects, bundle.impact
    if found is None or impact is None:
        name = bundle.query.name
        deps.metrics.unresolved_name(metric, name)  # hidden or unknown, counted alike
        return format_unresolved(name, bundle.resolved.resolution, command="suspects")
    note_entities(found.entity)
    note_counts(dependencies=len(found.dependencies), impacted=impact.impacted_count)
    message = format_alert_reply(
        found, impact, bundle.freshness, passages=bundle.passages, phrasing=bundle.phrasing, live=bundle.live
    )
    return replace(message, draw_picture=lambda: alert_dot(found, impact, snapshot))


# Slack's renderer tables, keyed by question kind (`bot/query/kinds.py`); each front takes the kinds its
# parser or handlers read, and `tests/bot/test_question_kinds.py` checks it renders every one.
SlashRenderer = Callable[[BotDeps, Any, Snapshot, bool], SlackMessage]  # (deps, bundle, snapshot, shared)
SLASH_REPLIES: dict[str, SlashRenderer] = {
    BLAST: lambda deps, bundle, snapshot, shared: blast_message(deps, bundle, shared=shared),
    SUSPECTS: lambda deps, bundle, snapshot, shared: suspects_message(deps, bundle, snapshot, shared=shared),
}
ThreadRenderer = Callable[[BotDeps, Any, Snapshot], SlackMessage]  # (deps, bundle, snapshot)
THREAD_REPLIES: dict[str, ThreadRenderer] = {
    ASK: lambda deps, bundle, snapshot: mention_message(bundle, snapshot),
    # The PagerDuty webhook's post renders its alert the same way (`bot/pagerduty/incident_reply.py`).
    ALERT: lambda deps, bundle, snapshot: alert_message(deps, bundle, snapshot, metric="alert"),
}
SLASH_COMMANDS = Front("Slack slash commands and their buttons", frozenset(USAGE), SLASH_REPLIES)
MENTIONS = Front("Slack mentions", frozenset({ASK}), THREAD_REPLIES)
ALERT_THREADS = Front("Slack alert threads and PagerDuty incident posts", frozenset({ALERT}), THREAD_REPLIES)

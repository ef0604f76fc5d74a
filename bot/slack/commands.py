"""Slash commands and the buttons on their answers. Each handler acks first, then answers.

A request is answered once: its `trigger_id` (unique per invocation; a replay carries the same) is
claimed while the answer is computed (`claims.claim_beside`), the computed message posted only if
the claim was won, and the claim settled after the post, so a replay of an answered command posts
nothing and one whose answer never arrived is answered (`bot/slack/claims`). Answers go to the request's
`response_url` through `bot/slack/response_url` (no retry of its own) and `deps.poster` (retried
until it arrives). The answer is computed in a work slot and posted outside it, so a post waiting
to retry never holds the CPU from other answers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.slack.arguments import BLAST, SUSPECTS
from bot.slack.blocks.messages import format_lag, format_refusal
from bot.slack.blocks.review import with_review_button
from bot.slack.button_values import UnreadableButton, read_rerun
from bot.slack.claims import claim_beside, delivering
from bot.slack.delivery import message_kwargs, respond_with
from bot.slack.deps import BotDeps
from bot.slack.replies import reply_to_command
from bot.slack.response_url import Responder, ResponseUrl
from bot.telemetry.instrument import observed_query
from graph.coverage import coverage, what_it_knows
from graph.exposure.visibility import Viewer

log = logging.getLogger(__name__)
_PICK = re.compile(r"^pick_entity_\d+$")
REFUSAL = "Sorry — /graph-lag is for oncall-graph admins. Ask one of them, or check #oncall-graph alerts."


def _viewer(payload: dict[str, Any]) -> Viewer:
    user = payload.get("user_id") or (payload.get("user") or {}).get("id", "")
    channel = payload.get("channel_id") or (payload.get("channel") or {}).get("id", "")
    return Viewer(channel=str(channel), user=str(user))


Post = Callable[[], object]  # a computed answer's post


def _timed(deps: BotDeps, payload: dict[str, Any], command: str, text: str, compute: Callable[[], Post]) -> None:
    """Once per trigger_id; counted, timed (from the ack, so a wait for a work slot shows), logged and
    traced. `compute` runs while the claim is taken and returns the post, made only if it was won."""
    trigger = str(payload.get("trigger_id") or "")
    # Counted as answering from the ack to the settlement, not only in its work slots: background
    # work (full texts, pictures) ran under the claim, the post and the settlement (bench: 100k hub).
    with deps.work_slots.arriving():
        claiming = claim_beside(deps.claims, [f"command:{trigger}"] if trigger else [])
        with observed_query(deps.metrics, command, text):
            try:
                post = compute()
            except BaseException:
                claiming.give_back()
                raise
            taken, _refused = claiming.outcome()
            if taken is None:
                log.info("request %s (%s) was already answered or is being answered; its answer is dropped",
                         trigger, command)  # fmt: skip
                deps.metrics.deduplicated.labels("replay").inc()
                return
            deps.metrics.requests.labels(command).inc()
            with delivering(taken):
                post()


def on_query_command(
    ack: Ack, command: dict[str, Any], respond: Responder, client: WebClient, deps: BotDeps, *, name: str
) -> None:
    """/blast-radius and /suspects: ack, then answer where it was asked."""
    ack()
    text, viewer = command.get("text", ""), _viewer(command)
    _timed(deps, command, name, text, lambda: _answer(deps, respond, client, name, text, viewer, shared=False))


def on_lag_command(ack: Ack, command: dict[str, Any], respond: Responder, deps: BotDeps) -> None:
    """/graph-lag, for admins only: every source's age and state, and the review queue's button."""
    ack()
    user = command.get("user_id", "")
    if user not in deps.admins:
        log.warning("refused /graph-lag to non-admin user %s in channel %s", user, command.get("channel_id"))
        deps.metrics.refused.labels("graph-lag").inc()
        refusal = message_kwargs(format_refusal(REFUSAL))
        deps.poster(lambda: respond(**refusal), what="graph-lag")
        return

    def compute() -> Post:
        with deps.work_slots:
            snapshot = deps.snapshot()
            counts = deps.hygiene(snapshot) if snapshot is not None else {}
            known = what_it_knows(coverage(snapshot)) if snapshot is not None else ""
            report = format_lag(deps.lag(), hygiene=counts, now=deps.clock(), coverage=known)
            kwargs = message_kwargs(with_review_button(report, deps.pending_reviews()[0]))
        return lambda: deps.poster(lambda: respond(**kwargs), what="graph-lag")

    _timed(deps, command, "graph-lag", "", compute)


def on_share(ack: Ack, body: dict[str, Any], respond: Responder, client: WebClient, deps: BotDeps) -> None:
    """The "share" button: the same answer again, in the channel."""
    ack()
    _rerun(deps, body, respond, client, shared=True)


def on_pick(ack: Ack, body: dict[str, Any], respond: Responder, client: WebClient, deps: BotDeps) -> None:
    """A suggestion's button: the command again with the picked name."""
    ack()
    _rerun(deps, body, respond, client, shared=False)


def register(app: App, deps: BotDeps) -> None:
    """Bolt passes each handler the arguments its parameters name; `deps` is bound here, and Bolt's
    `respond` is swapped for a `response_url` poster that leaves retrying to `deps.poster`."""

    def query(name: str) -> Callable[..., None]:
        return lambda ack, command, respond, client: on_query_command(
            ack, command, ResponseUrl.of(respond), client, deps, name=name
        )

    app.command("/blast-radius")(query(BLAST))
    app.command("/suspects")(query(SUSPECTS))
    app.command("/graph-lag")(lambda ack, command, respond: on_lag_command(ack, command, ResponseUrl.of(respond), deps))
    app.action("share_answer")(
        lambda ack, body, respond, client: on_share(ack, body, ResponseUrl.of(respond), client, deps)
    )
    app.action({"action_id": _PICK})(
        lambda ack, body, respond, client: on_pick(ack, body, ResponseUrl.of(respond), client, deps)
    )


def _rerun(deps: BotDeps, body: dict[str, Any], respond: Responder, client: WebClient, *, shared: bool) -> None:
    """A button carries the command and its arguments; run it again (as the clicking user sees it).
    A value that cannot be read is answered with what is wrong in it, to the one who clicked."""
    viewer = _viewer(body)
    try:
        rerun = read_rerun(body["actions"][0].get("value"))
    except UnreadableButton as exc:
        log.warning("a button with an unreadable value: %s", exc)
        notice = format_refusal(f"Sorry — oncall-graph could not read this button: {exc}.")
        refusal = {"response_type": "ephemeral", "replace_original": False, **message_kwargs(notice)}
        deps.poster(lambda: respond(**refusal), what="button")
        return
    command, text = rerun.command, rerun.text
    # A button reruns the query: counted and timed as that command.
    _timed(deps, body, command, text, lambda: _answer(deps, respond, client, command, text, viewer, shared=shared))


def _answer(
    deps: BotDeps, respond: Responder, client: WebClient, command: str, text: str, viewer: Viewer, *, shared: bool
) -> Post:
    """A query command's answer (a "still loading" notice before the first graph), and its post where it
    was asked; its CPU work takes work slots (`reply_to_command`), its wait for live data none."""
    message = reply_to_command(deps, deps.snapshot(), command, text, viewer, shared=shared)
    return lambda: respond_with(respond, client, message, channel=viewer.channel, user=viewer.user, shared=shared,
                                poster=deps.poster, what=command, attachments=deps.attachments)  # fmt: skip

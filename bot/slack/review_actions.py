"""The review buttons: an admin opens the queue of extracted edges from /graph-lag, then approves or
rejects each. Every click is checked against ONCALL_GRAPH_ADMINS; a non-admin is refused and logged.
Decisions go through `deps.decide_review`, recorded with the clicking user's Slack id.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App

from bot.slack.blocks.messages import format_refusal
from bot.slack.blocks.review import APPROVE, OPEN, REJECT, decision_note, format_review_queue
from bot.slack.delivery import message_kwargs
from bot.slack.deps import BotDeps
from bot.slack.response_url import Responder, ResponseUrl
from bot.slack.retrying import PostFailed
from graph.review import ReviewError

log = logging.getLogger(__name__)
REFUSAL = "Sorry — reviewing extracted edges is for oncall-graph admins."


def _user(body: dict[str, Any]) -> str:
    return str((body.get("user") or {}).get("id", ""))


def _edge_id(body: dict[str, Any]) -> int | None:
    try:
        value = json.loads(body["actions"][0]["value"])
        return int(value["id"])
    except (KeyError, IndexError, TypeError, ValueError):
        log.warning("ignored a review button with an unreadable value: %r", body.get("actions"))
        return None


def _admitted(deps: BotDeps, body: dict[str, Any], respond: Responder, action: str) -> str:
    """The clicking user when an admin; else "" after refusing them (and logging it)."""
    user = _user(body)
    deps.metrics.requests.labels("graph-review").inc()
    if user in deps.admins:
        return user
    log.warning("refused review action %s to non-admin user %s", action, user)
    deps.metrics.refused.labels("graph-review").inc()
    _post(deps, respond, replace_original=False, response_type="ephemeral", **message_kwargs(format_refusal(REFUSAL)))
    return ""


def _post(deps: BotDeps, respond: Responder, **message: Any) -> None:
    """To the click's response_url, retried until it arrives; one that never does is logged there."""
    try:
        deps.poster(lambda: respond(**message), what="graph-review")
    except PostFailed:
        return


def on_review_open(ack: Ack, body: dict[str, Any], respond: Responder, deps: BotDeps) -> None:
    """/graph-lag's review button: the queue, to the admin alone."""
    ack()
    if _admitted(deps, body, respond, OPEN):
        total, edges = deps.pending_reviews()
        queue = message_kwargs(format_review_queue(total, edges))
        _post(deps, respond, replace_original=False, response_type="ephemeral", **queue)


def on_review_decision(
    ack: Ack, body: dict[str, Any], respond: Responder, deps: BotDeps, *, decision: str, action: str
) -> None:
    """Approve or reject one edge, then show the queue again in place with a note of what was done."""
    ack()
    user = _admitted(deps, body, respond, action)
    edge_id = _edge_id(body) if user else None
    if edge_id is None or deps.decide_review is None:
        return
    try:
        edge = deps.decide_review(edge_id, decision, user)
    except ReviewError as exc:
        note = str(exc)
    else:
        note = decision_note(edge, user)
        log.info("extracted edge #%s %s by %s", edge.id, edge.status, user)
    total, edges = deps.pending_reviews()
    _post(deps, respond, replace_original=True, **message_kwargs(format_review_queue(total, edges, note=note)))


def register(app: App, deps: BotDeps) -> None:
    """Bolt passes each handler the arguments its parameters name; `deps` is bound here, and Bolt's
    `respond` is swapped for a `response_url` poster that leaves retrying to `deps.poster`."""

    def decide(decision: str, action: str) -> Callable[..., None]:
        return lambda ack, body, respond: on_review_decision(
            ack, body, ResponseUrl.of(respond), deps, decision=decision, action=action
        )

    app.action(OPEN)(lambda ack, body, respond: on_review_open(ack, body, ResponseUrl.of(respond), deps))
    app.action(APPROVE)(decide("approve", APPROVE))
    app.action(REJECT)(decide("reject", REJECT))

"""The "Blast radius" message shortcut: on any message (an alert from another tool, a colleague's
question), the entities it names are resolved as a question's names are (`graph/questions/mentions`)
and each one's blast radius is answered in the message's thread, as the clicking person sees it.

Acked at once; answered once per click (its `trigger_id` claimed, as a slash command's is). A message
that names nothing, or only names several entities could mean, is told to the person alone through
the shortcut's `response_url`; so is a thread the bot cannot post in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.query.bundle import BlastAnswer
from bot.query.kinds import BLAST, Front, Question, answer
from bot.slack.alert_message import parse_alert
from bot.slack.blocks.messages import SlackMessage, format_refusal, format_unresolved
from bot.slack.claims import delivering, take_all
from bot.slack.delivery import message_kwargs, say_in_thread
from bot.slack.deps import BotDeps
from bot.slack.replies import LOADING, blast_message, ground
from bot.slack.response_url import Responder, ResponseUrl
from bot.slack.retrying import PostFailed
from bot.telemetry.instrument import observed_query
from graph.exposure.visibility import Viewer, can_see
from graph.naming.names import Resolution
from graph.questions.mentions import Mention, find_mentions
from graph.snapshot import Snapshot

log = logging.getLogger(__name__)
CALLBACK_ID = "blast_radius_message"
MAX_ANSWERS = 3  # blast radii posted for one message: an alert names one service, a question two or three
NO_THREAD = "This message has no thread oncall-graph can answer in."
NOTHING_NAMED = (
    "oncall-graph found no entity of the graph named in this message. Try /blast-radius NAME with the service's name."
)

# The question kinds this front answers, and how each is rendered.
RENDERERS: Mapping[str, Callable[[BotDeps, BlastAnswer], SlackMessage]] = {
    BLAST: lambda deps, bundle: blast_message(deps, bundle, shared=True),
}
FRONT = Front("Slack's message shortcut", frozenset({BLAST}), RENDERERS)


def on_blast_shortcut(ack: Ack, body: dict[str, Any], respond: Responder, client: WebClient, deps: BotDeps) -> None:
    ack()
    message = body.get("message") or {}
    channel = str((body.get("channel") or {}).get("id") or "")
    viewer = Viewer(channel=channel, user=str((body.get("user") or {}).get("id") or ""))
    thread = str(message.get("thread_ts") or message.get("ts") or "")
    trigger = str(body.get("trigger_id") or "")
    taken, _refused = take_all(deps.claims, [f"shortcut:{trigger}"] if trigger else [])
    if taken is None:
        deps.metrics.deduplicated.labels("replay").inc()
        return
    deps.metrics.requests.labels("shortcut").inc()
    text = message_text(message)
    with observed_query(deps.metrics, "shortcut", text), delivering(taken):
        snapshot = deps.snapshot()
        if snapshot is None or not (channel and thread):
            _tell(deps, respond, format_refusal(LOADING if snapshot is None else NO_THREAD))
            return
        with deps.work_slots:
            named = named_in(snapshot, text, viewer)
        found = [m.entity for m in named if m.entity][:MAX_ANSWERS]
        if not found:
            _tell(deps, respond, _nothing_found(named))
            return
        for ref in found:
            bundle = answer(Question(BLAST, name=ref), ground(deps, snapshot, viewer))
            with deps.work_slots:
                reply = RENDERERS[BLAST](deps, bundle)
            try:
                say_in_thread(client, reply, channel=channel, thread_ts=thread, poster=deps.poster, what="shortcut",
                              attachments=deps.attachments)  # fmt: skip
            except PostFailed as exc:
                _tell(deps, respond, format_refusal(f"oncall-graph could not answer in this thread: {exc.reason}."
                                                    " Invite @oncall-graph to the channel and try again."))  # fmt: skip
                raise


def message_text(message: Mapping[str, Any]) -> str:
    """What the message says: its text, and an alert's service and title where its attachments hold them."""
    alert = parse_alert(message)
    pieces = [str(message.get("text") or "")]
    pieces += [alert.service_name, alert.title] if alert is not None else []
    return "\n".join(piece for piece in pieces if piece)


def named_in(snapshot: Snapshot, text: str, viewer: Viewer) -> tuple[Mention, ...]:
    """The names the text types, resolved as this viewer may resolve them."""
    return find_mentions(snapshot.aliases, text, allow=lambda ref: can_see(snapshot, ref, viewer))


def register(app: App, deps: BotDeps) -> None:
    app.message_shortcut(CALLBACK_ID)(
        lambda ack, body, respond, client: on_blast_shortcut(ack, body, ResponseUrl.of(respond), client, deps)
    )


def _nothing_found(named: tuple[Mention, ...]) -> SlackMessage:
    ambiguous = next((m for m in named if m.candidates), None)
    if ambiguous is None:
        return format_refusal(NOTHING_NAMED)
    resolution = Resolution(ambiguous.text, None, ambiguous.candidates)
    return format_unresolved(ambiguous.text, resolution, command="blast-radius")


def _tell(deps: BotDeps, respond: Responder, notice: SlackMessage) -> None:
    """To the person who clicked, alone."""
    kwargs = {"response_type": "ephemeral", **message_kwargs(notice)}
    try:
        deps.poster(lambda: respond(**kwargs), what="shortcut")
    except (PostFailed, ValueError) as exc:  # ValueError: the payload carried no response_url
        log.warning("could not tell the person who used the shortcut: %s", exc)

"""Slack's assistant pane (Bolt's `Assistant`): suggested prompts when a thread starts, and each
question in the thread answered as an @mention is, in the asking person's visibility.

A thread's prompts come from where the person came from (`assistant_thread.context.channel_id`):
from a watched alert channel with a recent alert, about the service it names; else about the most
depended-on entities they may see. While a question is answered the thread shows a status; the
answer is posted in the thread (which clears it), and the thread is titled by the entity asked about.
Every event is claimed once (`bot/slack/events.claim_event`) and posted through `deps.poster`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import suppress
from datetime import timedelta
from typing import Any

from slack_bolt import App, Assistant
from slack_sdk import WebClient

from bot.query.bundle import AskAnswer
from bot.query.kinds import ASK, Front
from bot.slack.alert_message import incident_key, is_alert, parse_alert
from bot.slack.blocks.kit import file_title
from bot.slack.blocks.messages import SlackMessage, format_refusal
from bot.slack.claims import delivering
from bot.slack.delivery import say_in_thread
from bot.slack.deps import BotDeps
from bot.slack.events import answer_question, claim_event
from bot.slack.prompts import MAX_PROMPTS, PROMPTS_TITLE, Prompt, alert_prompts, graph_prompts
from bot.slack.replies import LOADING, mention_message
from bot.slack.retrying import PostFailed
from bot.telemetry.instrument import observed_query
from graph.exposure.visibility import Viewer, resolve_first
from graph.naming.refs import short_name
from graph.snapshot import Snapshot

log = logging.getLogger(__name__)
STATUS = "walking the graph…"
ALERT_WINDOW = timedelta(hours=6)  # an alert older than this no longer says where the person is looking
HISTORY_LIMIT = 50  # messages of the alert channel read for its last alert
TITLE_CHARS = 100

# The question kinds this front answers, and how each is rendered.
RENDERERS: Mapping[str, Callable[[AskAnswer, Snapshot], SlackMessage]] = {ASK: mention_message}
FRONT = Front("Slack's assistant pane", frozenset({ASK}), RENDERERS)


def on_thread_started(body: dict[str, Any], event: dict[str, Any], client: WebClient, deps: BotDeps) -> None:
    """A new assistant thread (or the person moved to another channel beside it): prompts for it."""
    thread = event.get("assistant_thread") or {}
    channel, thread_ts = str(thread.get("channel_id") or ""), str(thread.get("thread_ts") or "")
    taken = claim_event(deps, body, event, "assistant-thread", twin=False)
    if taken is None or not (channel and thread_ts):
        return
    came_from = str((thread.get("context") or {}).get("channel_id") or "")
    viewer = Viewer(channel=channel, user=str(thread.get("user_id") or ""))
    with delivering(taken):
        prompts = _prompts(deps, client, viewer, came_from)
        sent = [p.as_slack() for p in prompts[:MAX_PROMPTS]]
        deps.poster(lambda: client.assistant_threads_setSuggestedPrompts(
            channel_id=channel, thread_ts=thread_ts, prompts=sent, title=PROMPTS_TITLE), what="assistant")  # fmt: skip


def on_user_message(body: dict[str, Any], event: dict[str, Any], client: WebClient, deps: BotDeps) -> None:
    """A question in the thread: a status while it is answered, the answer in the thread, the thread's title."""
    taken = claim_event(deps, body, event, "assistant")
    if taken is None:
        return
    channel, thread_ts = str(event.get("channel") or ""), str(event.get("thread_ts") or event.get("ts") or "")
    question = str(event.get("text") or "").strip()
    with observed_query(deps.metrics, "assistant", question), delivering(taken):
        thread: dict[str, Any] = {"channel_id": channel, "thread_ts": thread_ts}
        _cosmetic(deps, lambda: client.assistant_threads_setStatus(**thread, status=STATUS))
        snapshot = deps.snapshot()
        viewer = Viewer(channel=channel, user=str(event.get("user") or ""))
        if snapshot is None:
            _say(deps, client, format_refusal(LOADING), channel, thread_ts)
            return
        bundle, message = answer_question(deps, snapshot, question, viewer, render=RENDERERS[ASK])
        _say(deps, client, message, channel, thread_ts)
        if bundle is not None and bundle.answer.entities:
            title = file_title(short_name(bundle.answer.entities[0]), TITLE_CHARS)  # no formatting documented
            _cosmetic(deps, lambda: client.assistant_threads_setTitle(**thread, title=title))


def register(app: App, deps: BotDeps) -> None:
    """The assistant's listeners; Bolt passes each the arguments its parameters name."""
    assistant = Assistant()
    started = lambda body, event, client: on_thread_started(body, event, client, deps)  # noqa: E731
    assistant.thread_started(started)
    assistant.thread_context_changed(started)  # new context, new prompts (instead of Bolt's context store)
    assistant.user_message(lambda body, event, client: on_user_message(body, event, client, deps))
    app.assistant(assistant)


def _prompts(deps: BotDeps, client: WebClient, viewer: Viewer, came_from: str) -> tuple[Prompt, ...]:
    snapshot = deps.snapshot()
    if snapshot is None:
        return (Prompt("What was deployed in the last hour?", "What was deployed in the last hour?"),)
    messages = _recent_messages(deps, client, came_from)  # the network's wait holds no work slot
    with deps.work_slots:
        alerted = _alerted(deps, snapshot, viewer, messages)
        return alert_prompts(short_name(alerted)) if alerted else graph_prompts(snapshot, viewer)


def _recent_messages(deps: BotDeps, client: WebClient, channel: str) -> list[Any]:
    """The last ALERT_WINDOW of a watched `channel`, newest first; none from any other channel."""
    if channel not in deps.watch_channels:
        return []
    oldest = f"{(deps.clock() - ALERT_WINDOW).timestamp():.6f}"
    try:
        reply = deps.poster(lambda: client.conversations_history(channel=channel, oldest=oldest, limit=HISTORY_LIMIT),
                            what="assistant")  # fmt: skip
    except PostFailed:
        return []  # already logged: the prompts fall back to the graph's own
    messages = reply.get("messages")
    return messages if isinstance(messages, list) else []


def _alerted(deps: BotDeps, snapshot: Snapshot, viewer: Viewer, messages: list[Any]) -> str | None:
    """The entity the newest alert among `messages` (newest first) names, as the person may see it, or
    None; an incident resolved by a newer message is over, whatever its older messages said."""
    resolved: set[str] = set()
    for message in messages:
        if not isinstance(message, dict) or not is_alert(message, alert_bots=deps.alert_bots):
            continue
        alert = parse_alert(message)
        if alert is None:
            continue
        if alert.status == "resolved" or incident_key(alert) in resolved:
            resolved.add(incident_key(alert))
            continue
        found = resolve_first(snapshot, [alert.service_id, alert.service_name], viewer, fallback=alert.title).entity
        if found:
            return found
    return None


def _cosmetic(deps: BotDeps, call: Callable[[], object]) -> None:
    """A status or a title: worth retrying, never worth failing the answer for."""
    with suppress(PostFailed):  # logged and counted by the poster
        deps.poster(call, what="assistant")


def _say(deps: BotDeps, client: WebClient, message: SlackMessage, channel: str, thread_ts: str) -> None:
    say_in_thread(client, message, channel=channel, thread_ts=thread_ts, poster=deps.poster, what="assistant",
                  attachments=deps.attachments)  # fmt: skip

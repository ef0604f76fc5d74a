"""Events: questions in @mentions, and PagerDuty alerts in watched channels, answered in thread.

Every delivery is claimed in the database first — by its event id (Slack's retries) and by the
message it is about (the mention and its plain-message twin) — so one reply goes out, whichever
replica receives which copy.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.query.asking import ModelPorts, ask_question, explain_alert
from bot.render.dot import alert_dot, answer_dot
from bot.slack.alert_message import Alert, incident_key, is_alert, parse_alert
from bot.slack.blocks.messages import format_alert_reply, format_answer, format_refusal, format_unresolved
from bot.slack.delivery import say_in_thread
from bot.slack.deps import BotDeps
from bot.slack.replies import LOADING
from bot.telemetry.instrument import note_counts, note_entities, observed_query
from graph.blast import blast_radius
from graph.names import Resolution
from graph.passages import cite_passages
from graph.snapshot import Snapshot
from graph.suspects import suspects
from graph.visibility import Viewer, resolve_first

log = logging.getLogger(__name__)
_MENTION = re.compile(r"<@[A-Z0-9]+(\|[^>]*)?>")
QUIET_STATUSES = frozenset({"acknowledged", "resolved"})


def _claimed(deps: BotDeps, body: dict[str, Any], event: dict[str, Any], kind: str) -> bool:
    """True when this replica is the one to answer; repeats and twins are counted and dropped."""
    event_id = str(body.get("event_id") or "")
    if event_id and not deps.claim(f"event:{event_id}"):
        deps.metrics.deduplicated.labels("retry").inc()
        return False
    if not deps.claim(f"reply:{event.get('channel')}:{event.get('ts')}"):
        deps.metrics.deduplicated.labels("twin").inc()
        return False
    deps.metrics.requests.labels(kind).inc()
    return True


def register(app: App, deps: BotDeps) -> None:
    def on_app_mention(body: dict[str, Any], event: dict[str, Any], client: WebClient) -> None:
        if not _claimed(deps, body, event, "mention"):
            return
        # The graph's parts take a work slot each; the model's network waits take none.
        with observed_query(deps.metrics, "mention", _question(event)):
            _answer_mention(deps, event, client)

    def on_message(body: dict[str, Any], event: dict[str, Any], client: WebClient) -> None:
        # Every channel message lands here, so none is left unhandled (a 404 makes Slack retry).
        if event.get("channel") not in deps.watch_channels or not is_alert(event, alert_bots=deps.alert_bots):
            return
        alert = parse_alert(event)
        if alert is None or alert.status in QUIET_STATUSES:
            return
        if not _claimed(deps, body, event, "alert"):
            return
        if not deps.claim(f"incident:{incident_key(alert)}"):
            deps.metrics.deduplicated.labels("incident").inc()
            return
        with observed_query(deps.metrics, "alert", _alert_name(alert)):
            _answer_alert(deps, client, alert, str(event.get("channel")), str(event.get("ts")))

    app.event("app_mention")(on_app_mention)
    app.event("message")(on_message)


def _question(event: dict[str, Any]) -> str:
    return _MENTION.sub("", str(event.get("text", ""))).strip()


def _alert_name(alert: Alert) -> str:
    return alert.service_name or alert.service_id or alert.title


def _answer_mention(deps: BotDeps, event: dict[str, Any], client: WebClient) -> None:
    channel, thread = str(event.get("channel", "")), str(event.get("thread_ts") or event.get("ts", ""))
    snapshot = deps.snapshot()
    if snapshot is None:
        say_in_thread(client, format_refusal(LOADING), channel=channel, thread_ts=thread)
        return
    question = _question(event)
    viewer = Viewer(channel=channel, user=str(event.get("user", "")))
    now = deps.clock()
    asked = ask_question(
        snapshot, question, now=now, model=_model(deps), viewer=viewer, purpose="mention", cpu=deps.work_slots
    )
    answer = asked.answer
    note_entities(*answer.entities)
    note_counts(edges=len(answer.edges))
    drawing = lambda: answer_dot(snapshot, answer, now=now, viewer=viewer)  # noqa: E731
    with deps.work_slots:
        message = replace(format_answer(answer, snapshot, now=now, phrasing=asked.phrasing), draw_picture=drawing)
        say_in_thread(client, message, channel=channel, thread_ts=thread, attachments=deps.attachments)


def _model(deps: BotDeps) -> ModelPorts:
    return ModelPorts(deps.explainer, deps.reader, deps.metrics)


def _resolve_alert(snapshot: Snapshot, alert: Alert, viewer: Viewer) -> Resolution:
    fallback = alert.service_name or alert.title or alert.service_id
    return resolve_first(snapshot, (alert.service_id, alert.service_name), viewer, fallback=fallback)


def _answer_alert(deps: BotDeps, client: WebClient, alert: Alert, channel: str, ts: str) -> None:
    snapshot = deps.snapshot()
    if snapshot is None:
        say_in_thread(client, format_refusal(LOADING), channel=channel, thread_ts=ts)
        return
    viewer = Viewer(channel=channel)
    with deps.work_slots:
        resolution = _resolve_alert(snapshot, alert, viewer)
    if resolution.entity is None:
        name = _alert_name(alert)
        # A service hidden from this channel (restricted) is no gap in the catalog: not counted by name.
        deps.metrics.unresolved_name("alert", name, by_name=not snapshot.aliases.names_one(name))
        say_in_thread(client, format_unresolved(name, resolution, command="suspects"), channel=channel, thread_ts=ts)
        return
    note_entities(resolution.entity)
    now = deps.clock()
    with deps.work_slots:
        found = suspects(snapshot, resolution.entity, now=now, viewer=viewer)
        impact = blast_radius(snapshot, resolution.entity, viewer=viewer)
    note_counts(dependencies=len(found.dependencies), impacted=impact.impacted_count)
    quoted = cite_passages(snapshot, found.subjects(), viewer=viewer)
    model = _model(deps)
    phrased = explain_alert(model, snapshot, found, impact, title=alert.title, viewer=viewer, cpu=deps.work_slots)
    with deps.work_slots:
        message = format_alert_reply(found, impact, snapshot, now=now, passages=quoted, phrasing=phrased.phrasing)
        message = replace(message, draw_picture=lambda: alert_dot(found, impact, snapshot))
        say_in_thread(client, message, channel=channel, thread_ts=ts, attachments=deps.attachments)

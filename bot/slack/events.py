"""Events: questions in @mentions, and PagerDuty alerts in watched channels, answered in thread.

Every delivery is claimed in the database first — by its event id (Slack's retries) and by the
message it is about (the mention and its plain-message twin) — so one reply goes out, whichever
replica receives which copy.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.query.alert import answer_alert
from bot.query.ask import answer_ask
from bot.query.bundle import AlertQuery
from bot.slack.alert_message import Alert, incident_key, is_alert, parse_alert
from bot.slack.blocks.messages import (
    format_refusal,
)
from bot.slack.delivery import say_in_thread
from bot.slack.deps import BotDeps
from bot.slack.replies import LOADING, alert_message, mention_message, model_ports, window_refusal
from bot.telemetry.instrument import observed_query
from graph.visibility import Viewer

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


def on_app_mention(body: dict[str, Any], event: dict[str, Any], client: WebClient, deps: BotDeps) -> None:
    """A question in an @mention, answered in its thread."""
    if not _claimed(deps, body, event, "mention"):
        return
    # The graph's parts take a work slot each; the model's network waits take none.
    with observed_query(deps.metrics, "mention", _question(event)):
        _answer_mention(deps, event, client)


def on_message(body: dict[str, Any], event: dict[str, Any], client: WebClient, deps: BotDeps) -> None:
    """A PagerDuty alert in a watched channel, answered in its thread; every other message ignored."""
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


def register(app: App, deps: BotDeps) -> None:
    """Bolt passes each handler the arguments its parameters name; `deps` is bound here."""
    app.event("app_mention")(lambda body, event, client: on_app_mention(body, event, client, deps))
    app.event("message")(lambda body, event, client: on_message(body, event, client, deps))


def _question(event: dict[str, Any]) -> str:
    return _MENTION.sub("", str(event.get("text", ""))).strip()


def _alert_name(alert: Alert) -> str:
    return alert.service_name or alert.service_id or alert.title


def _answer_mention(deps: BotDeps, event: dict[str, Any], client: WebClient) -> None:
    channel, thread = str(event.get("channel", "")), str(event.get("thread_ts") or event.get("ts", ""))
    snapshot = deps.snapshot()
    refusal = format_refusal(LOADING) if snapshot is None else window_refusal(_question(event))
    if snapshot is None or refusal is not None:
        say_in_thread(client, refusal or format_refusal(LOADING), channel=channel, thread_ts=thread)
        return
    viewer = Viewer(channel=channel, user=str(event.get("user", "")))
    bundle = answer_ask(
        snapshot, _question(event), viewer, deps.clock(), deps.stale_policy, model_ports(deps), purpose="mention",
        cpu=deps.work_slots,
    )  # fmt: skip
    with deps.work_slots:
        message = mention_message(bundle, snapshot)
        say_in_thread(client, message, channel=channel, thread_ts=thread, attachments=deps.attachments)


def alert_query(alert: Alert) -> AlertQuery:
    return AlertQuery(alert.service_id, alert.service_name, alert.title)


def _answer_alert(deps: BotDeps, client: WebClient, alert: Alert, channel: str, ts: str) -> None:
    snapshot = deps.snapshot()
    if snapshot is None:
        say_in_thread(client, format_refusal(LOADING), channel=channel, thread_ts=ts)
        return
    viewer = Viewer(channel=channel)
    now, policy = deps.clock(), deps.stale_policy
    bundle = answer_alert(snapshot, alert_query(alert), viewer, now, policy, model_ports(deps), cpu=deps.work_slots)
    with deps.work_slots:
        message = alert_message(deps, bundle, snapshot, metric="alert")
        say_in_thread(client, message, channel=channel, thread_ts=ts, attachments=deps.attachments)

"""Events: questions in @mentions, and PagerDuty alerts in watched channels, answered in thread.

Every delivery is claimed in the database first — by its event id (Slack's retries), by the
message it is about (the mention and its plain-message twin) and, for an alert, by its incident —
and the claim is settled by how the reply went (`bot/slack/claims`). One reply goes out, whichever
replica receives which copy; a retry of an event whose reply never arrived is answered, one whose
reply arrived is not.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.query.bundle import AlertQuery, AskAnswer
from bot.query.kinds import ALERT, ASK, Question, answer
from bot.slack.alert_message import Alert, incident_key, is_alert, parse_alert
from bot.slack.blocks.messages import SlackMessage, format_refusal
from bot.slack.claims import Taken, delivering, take_all
from bot.slack.delivery import say_in_thread
from bot.slack.deps import BotDeps
from bot.slack.replies import LOADING, THREAD_REPLIES, ground, window_refusal
from bot.telemetry.instrument import observed_query
from graph.exposure.visibility import Viewer
from graph.snapshot import Snapshot

log = logging.getLogger(__name__)
_MENTION = re.compile(r"<@[A-Z0-9]+(\|[^>]*)?>")
QUIET_STATUSES = frozenset({"acknowledged", "resolved"})
UNREADABLE_ALERT = (
    "Sorry — oncall-graph could not read this alert: it names no service, title or incident it can read,"
    " so there are no suspects to show. Try /suspects SERVICE."
)


def claim_event(
    deps: BotDeps, body: dict[str, Any], event: dict[str, Any], kind: str, incident: str = "", *, twin: bool = True
) -> Taken | None:
    """The claim when this replica is the one to answer; repeats, twins (`twin`: the event is about a
    message) and other alerts of the same incident are counted (by the key refused) and dropped."""
    event_id = str(body.get("event_id") or "")
    keys = {
        "retry": f"event:{event_id}" if event_id else "",
        "twin": f"reply:{event.get('channel')}:{event.get('ts')}" if twin else "",
        "incident": f"incident:{incident}" if incident else "",
    }
    taken, refused = take_all(deps.claims, [key for key in keys.values() if key])
    if taken is None:
        deps.metrics.deduplicated.labels(next(why for why, key in keys.items() if key == refused)).inc()
        return None
    deps.metrics.requests.labels(kind).inc()
    return taken


def on_app_mention(body: dict[str, Any], event: dict[str, Any], client: WebClient, deps: BotDeps) -> None:
    """A question in an @mention, answered in its thread."""
    taken = claim_event(deps, body, event, "mention")
    if taken is None:
        return
    # The graph's parts take a work slot each; the model's network waits and the post take none.
    with observed_query(deps.metrics, "mention", _question(event)), delivering(taken):
        _answer_mention(deps, event, client)


def on_message(body: dict[str, Any], event: dict[str, Any], client: WebClient, deps: BotDeps) -> None:
    """A PagerDuty alert in a watched channel, answered in its thread; every other message ignored."""
    # Every channel message lands here, so none is left unhandled (a 404 makes Slack retry).
    if event.get("channel") not in deps.watch_channels or not is_alert(event, alert_bots=deps.alert_bots):
        return
    alert = parse_alert(event)
    if alert is not None and alert.status in QUIET_STATUSES:
        return
    channel, ts = str(event.get("channel")), str(event.get("ts"))
    if alert is None or not alert_query(alert).name:
        # Someone waits on this alert: say it could not be read rather than nothing.
        taken = claim_event(deps, body, event, "alert", f"{channel}:{ts}")
        if taken is not None:
            with delivering(taken):
                _say(deps, client, format_refusal(UNREADABLE_ALERT), channel, ts, "alert")
        return
    taken = claim_event(deps, body, event, "alert", incident_key(alert))
    if taken is None:
        return
    with observed_query(deps.metrics, "alert", _alert_name(alert)), delivering(taken):
        _answer_alert(deps, client, alert, channel, ts)


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
    if snapshot is None:
        _say(deps, client, format_refusal(LOADING), channel, thread, "mention")
        return
    viewer = Viewer(channel=channel, user=str(event.get("user", "")))
    _bundle, message = answer_question(deps, snapshot, _question(event), viewer)
    _say(deps, client, message, channel, thread, "mention")  # outside the slot: a retry's wait holds no CPU


def answer_question(
    deps: BotDeps,
    snapshot: Snapshot,
    question: str,
    viewer: Viewer,
    *,
    render: Callable[[AskAnswer, Snapshot], SlackMessage] | None = None,
) -> tuple[AskAnswer | None, SlackMessage]:
    """A question in words (a mention, the assistant pane): a window out of range is told its range,
    anything else asked as the `ask` kind and rendered (by `render`, else as a mention) in a work slot."""
    refusal = window_refusal(question)
    if refusal is not None:
        return None, refusal
    bundle = answer(Question(ASK, text=question), ground(deps, snapshot, viewer, purpose="mention"))
    with deps.work_slots:
        return bundle, (render(bundle, snapshot) if render else THREAD_REPLIES[ASK](deps, bundle, snapshot))


def alert_query(alert: Alert) -> AlertQuery:
    return AlertQuery(alert.service_id, alert.service_name, alert.title)


def _answer_alert(deps: BotDeps, client: WebClient, alert: Alert, channel: str, ts: str) -> None:
    snapshot = deps.snapshot()
    if snapshot is None:
        _say(deps, client, format_refusal(LOADING), channel, ts, "alert")
        return
    bundle = answer(Question(ALERT, alert=alert_query(alert)), ground(deps, snapshot, Viewer(channel=channel)))
    with deps.work_slots:
        message = THREAD_REPLIES[ALERT](deps, bundle, snapshot)
    _say(deps, client, message, channel, ts, "alert")


def _say(deps: BotDeps, client: WebClient, message: SlackMessage, channel: str, thread: str, what: str) -> None:
    say_in_thread(client, message, channel=channel, thread_ts=thread, poster=deps.poster, what=what,
                  attachments=deps.attachments)  # fmt: skip

"""The answer to a triggered PagerDuty incident: claimed once across replicas, resolved through
the graph, posted in the service's channel with the same suspects view an alert thread gets.

The claim comes first, as for Slack events, and is settled by how the post went: a failed post is
retried with backoff (`bot/slack/retrying`); one that never arrived leaves the incident to be
answered by PagerDuty's next delivery of it, one that arrived is never posted again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from slack_sdk import WebClient

from bot.pagerduty.channel import choose_channel
from bot.pagerduty.incident_post import format_incident_post
from bot.pagerduty.payload import Incident
from bot.query.alert import answer_alert, resolve_alert
from bot.query.bundle import AlertQuery
from bot.slack.attachments import upload_full_text
from bot.slack.blocks.messages import SlackMessage
from bot.slack.claims import take_all
from bot.slack.delivery import message_kwargs
from bot.slack.deps import BotDeps
from bot.slack.replies import alert_message, model_ports
from bot.slack.retrying import Poster, PostFailed
from graph.exposure.visibility import EVERYONE, Viewer
from graph.naming.names import Resolution
from graph.snapshot import Snapshot

log = logging.getLogger(__name__)

# Outcomes, counted in oncall_graph_pagerduty_webhooks_total{outcome}.
POSTED = "posted"
UNRESOLVED = "unresolved"  # posted too: "not in the graph", with suggestions
DUPLICATE = "duplicate"
NO_CHANNEL = "no_channel"
FAILED = "failed"


@dataclass(frozen=True)
class IncidentRouting:
    channels: Mapping[str, str]  # ONCALL_GRAPH_PAGERDUTY_CHANNELS, parsed
    fallback: str  # ONCALL_GRAPH_ALERT_CHANNEL


def claim_key(incident: Incident) -> str:
    return f"pd-incident:{incident.id}"


def answer_incident(deps: BotDeps, client: WebClient, routing: IncidentRouting, incident: Incident) -> str:
    """Post about `incident` unless any replica already did; returns the outcome."""
    taken, _refused = take_all(deps.claims, [claim_key(incident)])
    if taken is None:
        log.info("PagerDuty incident %s was already answered (or is being answered); skipped", incident.id)
        return DUPLICATE
    outcome = FAILED
    try:
        outcome = _answer(deps, client, routing, incident)
    finally:
        taken.settle(delivered=outcome in (POSTED, UNRESOLVED))
    return outcome


def _answer(deps: BotDeps, client: WebClient, routing: IncidentRouting, incident: Incident) -> str:
    snapshot = deps.snapshot()
    if snapshot is None:  # the endpoint answers 503 until a graph is loaded; a restart can get here
        log.error("PagerDuty incident %s arrived with no graph loaded; not answered", incident.id)
        return FAILED
    # Routing may read a restricted entity's own annotation; what is posted is then filtered for that channel.
    routed = resolve_service(snapshot, incident, EVERYONE)
    route = choose_channel(
        snapshot, routing.channels, service_id=incident.service_id, entity=routed.entity, fallback=routing.fallback
    )
    if route is None:
        log.warning(
            "PagerDuty incident %s on %s: no channel to post in; set ONCALL_GRAPH_PAGERDUTY_CHANNELS or "
            "ONCALL_GRAPH_ALERT_CHANNEL",
            incident.id,
            incident.service_name or incident.service_id,
        )
        return NO_CHANNEL
    started = time.perf_counter()
    bundle = answer_alert(snapshot, alert_query(incident), Viewer(channel=route.channel), deps.clock(),
                          deps.stale_policy, model_ports(deps), cpu=deps.work_slots, live=deps.live)  # fmt: skip
    with deps.work_slots:
        message = format_incident_post(
            shown_incident(incident, bundle.query), alert_message(deps, bundle, snapshot, metric="pagerduty")
        )
    try:  # outside the slot: a retry's wait holds no CPU
        post(client, message, channel=route.channel, poster=deps.poster)
    except PostFailed as exc:
        log.error("could not post PagerDuty incident %s in %s: %s", incident.id, route.channel, exc)
        return FAILED
    deps.metrics.latency.labels("pagerduty").observe(time.perf_counter() - started)
    outcome = POSTED if bundle.resolved.entity else UNRESOLVED
    log.info("PagerDuty incident %s posted in %s (%s)", incident.id, route.channel, route.reason)
    return outcome


def alert_query(incident: Incident) -> AlertQuery:
    """The incident as an alert; its suspects window ends when it began, not when the webhook arrived."""
    return AlertQuery(incident.service_id, incident.service_name, incident.title, at=incident.created_at)


def shown_incident(incident: Incident, shown: AlertQuery) -> Incident:
    """The incident as its channel may read it: title and service as the answer redacted them."""
    return replace(incident, title=shown.title, service_name=shown.service_name, service_id=shown.service_id)


def resolve_service(snapshot: Snapshot, incident: Incident, viewer: Viewer) -> Resolution:
    """By PagerDuty service id (an alias of the entity carrying `pagerduty.com/service-id`), then by name."""
    return resolve_alert(snapshot, alert_query(incident), viewer).resolution


def post(client: WebClient, message: SlackMessage, *, channel: str, poster: Poster) -> None:
    """A new message in `channel`, retried until it arrives (else PostFailed); a cut answer's full text
    goes in its thread."""
    kwargs = {"channel": channel, **message_kwargs(message)}
    response = poster(lambda: client.chat_postMessage(**kwargs), what="pagerduty")
    thread = str(response.get("ts") or "") or None
    upload_full_text(client, message, channel=channel, thread_ts=thread, poster=poster)

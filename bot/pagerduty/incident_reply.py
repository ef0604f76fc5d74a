"""The answer to a triggered PagerDuty incident: claimed once across replicas, resolved through
the graph, posted in the service's channel with the same suspects view an alert thread gets.

The claim comes first, as for Slack events: a post that then fails is logged and counted, never
retried, so an incident is posted at most once whatever PagerDuty redelivers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.pagerduty.channel import choose_channel
from bot.pagerduty.incident_post import format_incident_post
from bot.pagerduty.payload import Incident
from bot.slack.attachments import upload_full_text
from bot.slack.blocks.messages import SlackMessage, format_alert_reply, format_unresolved
from bot.slack.delivery import message_kwargs
from bot.slack.deps import BotDeps
from graph.blast import blast_radius
from graph.names import Resolution
from graph.snapshot import Snapshot
from graph.suspects import suspects
from graph.visibility import EVERYONE, Viewer, resolve_first

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
    if not deps.claim(claim_key(incident)):
        log.info("PagerDuty incident %s was already answered; skipped", incident.id)
        return DUPLICATE
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
    with deps.work_slots:
        started = time.perf_counter()
        message, outcome = _message(deps, snapshot, incident, route.channel)
        try:
            post(client, message, channel=route.channel)
        except SlackApiError as exc:
            log.error("could not post PagerDuty incident %s in %s: %s", incident.id, route.channel,
                      exc.response.get("error"))  # fmt: skip
            return FAILED
        deps.metrics.latency.labels("pagerduty").observe(time.perf_counter() - started)
    log.info("PagerDuty incident %s posted in %s (%s)", incident.id, route.channel, route.reason)
    return outcome


def resolve_service(snapshot: Snapshot, incident: Incident, viewer: Viewer) -> Resolution:
    """By PagerDuty service id (an alias of the entity carrying `pagerduty.com/service-id`), then by name."""
    fallback = incident.service_name or incident.service_id
    return resolve_first(snapshot, (incident.service_id, incident.service_name), viewer, fallback=fallback)


def _message(deps: BotDeps, snapshot: Snapshot, incident: Incident, channel: str) -> tuple[SlackMessage, str]:
    viewer = Viewer(channel=channel)
    resolution = resolve_service(snapshot, incident, viewer)
    if resolution.entity is None:
        deps.metrics.unresolved.labels("pagerduty").inc()
        name = incident.service_name or incident.service_id
        return format_incident_post(incident, format_unresolved(name, resolution, command="suspects")), UNRESOLVED
    now = deps.clock()
    found = suspects(snapshot, resolution.entity, now=now, viewer=viewer)
    impact = blast_radius(snapshot, resolution.entity, viewer=viewer)
    reply = format_alert_reply(found, impact, snapshot, now=now, stale_after=deps.stale_after)
    return format_incident_post(incident, reply), POSTED


def post(client: WebClient, message: SlackMessage, *, channel: str) -> None:
    """A new message in `channel`; a cut answer's full text goes in its thread."""
    response = client.chat_postMessage(channel=channel, **message_kwargs(message))
    upload_full_text(client, message, channel=channel, thread_ts=str(response.get("ts") or "") or None)

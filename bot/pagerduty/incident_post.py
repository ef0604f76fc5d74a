"""A PagerDuty incident's post: the answer the alert thread gets (suspects view, or "not in the
graph" with suggestions), headed by one line naming the incident. Pure, like every formatter.
"""

from __future__ import annotations

from dataclasses import replace

from bot.pagerduty.payload import Incident
from bot.slack.blocks.kit import SlackMessage, clip, escape, headed, link, section

TITLE_CHARS = 200
SERVICE_CHARS = 100
URL_CHARS = 300  # a longer "URL" is not PagerDuty's; cutting it would break the link markup


def format_incident_post(incident: Incident, answer: SlackMessage) -> SlackMessage:
    """`answer` with the incident line after its header (or first); the notification names the incident.

    The line adds at most ~500 characters, which the answers' reserve under Slack's limits covers.
    """
    line = section(incident_line(incident))
    blocks = answer.blocks
    at = 1 if blocks and blocks[0].get("type") == "header" else 0
    title = clip(incident.title or incident.id, TITLE_CHARS)
    return replace(headed(answer, f"PagerDuty incident: {title}"), blocks=(*blocks[:at], line, *blocks[at:]))


def incident_line(incident: Incident) -> str:
    """`🚨 PagerDuty incident <url|title> · high urgency · service Payments (PAYMNTS)`."""
    title = clip(incident.title or incident.id, TITLE_CHARS)
    url = incident.html_url if len(incident.html_url) <= URL_CHARS else ""
    parts = [f"🚨 *PagerDuty incident* {link(url, title)}"]
    if incident.urgency:
        parts.append(f"{escape(clip(incident.urgency, 20))} urgency")
    service = clip(incident.service_name, SERVICE_CHARS)
    if service and incident.service_id:
        parts.append(f"service {escape(service)} ({escape(clip(incident.service_id, 40))})")
    elif service or incident.service_id:
        parts.append(f"service {escape(service or clip(incident.service_id, 40))}")
    return " · ".join(parts)

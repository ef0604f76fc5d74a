"""Which Slack channel hears about a PagerDuty incident: the first of

1. `ONCALL_GRAPH_PAGERDUTY_CHANNELS` (`KEY=CHANNEL,...`), KEY being the PagerDuty service id or
   any name of the entity the service resolves to;
2. the entity's `slack.com/channel` catalog annotation;
3. `ONCALL_GRAPH_ALERT_CHANNEL`.

Pure: the snapshot and the settings' values are passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graph.naming.names import resolve
from graph.snapshot import Snapshot

SETTING = "ONCALL_GRAPH_PAGERDUTY_CHANNELS"
CHANNEL_ANNOTATION = "slack.com/channel"


@dataclass(frozen=True, slots=True)
class Route:
    channel: str
    reason: str  # "setting", "annotation" or "alert channel": logged, so an operator can tell why


def parse_channel_map(text: str) -> dict[str, str]:
    """`KEY=CHANNEL,...` as a mapping; raises ValueError naming the setting and the bad item."""
    mapping: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, sep, channel = item.rpartition("=")
        if not sep or not key.strip() or not channel.strip():
            raise ValueError(f"{SETTING}: expected SERVICE_ID_OR_ENTITY=CHANNEL pairs, got {item!r}")
        mapping[key.strip()] = channel.strip()
    return mapping


def choose_channel(
    snapshot: Snapshot, channels: Mapping[str, str], *, service_id: str, entity: str | None, fallback: str
) -> Route | None:
    """The channel for an incident on `service_id` (resolved to `entity`, or None); None when nowhere is set."""
    wanted = service_id.casefold()
    for key, channel in channels.items():
        if wanted and key.casefold() == wanted:
            return Route(channel, "setting")
    if entity is not None:
        for key, channel in channels.items():
            if resolve(snapshot.aliases, key).entity == entity:
                return Route(channel, "setting")
        found = snapshot.entities.get(entity)
        annotated = found.annotations.get(CHANNEL_ANNOTATION, "").strip() if found else ""
        if annotated:
            return Route(annotated, "annotation")
    return Route(fallback, "alert channel") if fallback else None

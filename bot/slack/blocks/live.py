"""The live part of a Slack answer: how an entry's hop is doing now, its open incidents, and the one
line citing where the live part came from (or saying it is missing). Every number, name and title
goes through `kit`'s escaping; an incident's link is built only from an http(s) URL."""

from __future__ import annotations

from collections.abc import Sequence

from bot.render.live import incident_text, mark_text
from bot.slack.blocks.kit import Block, clip, context, escape, labelled_link
from graph.traffic.live import Incident, LiveMark, Present

TITLE_CHARS = 150
NOW_HEADING = "*Now: failing, or with an open incident*"


def now_lines(live: Present, mark: LiveMark | None, incidents: Sequence[Incident], indent: str = "      ") -> list[str]:
    """mrkdwn lines under an entry: its hop now (`🔴 now: checkout: 12% of calls to cart failing
    (last 5 min)`, or not failing yet), then each open incident, linked."""
    lines = []
    if mark is not None:
        said = escape(mark_text(mark, live))
        lines.append(f"{indent}🔴 *now*: {said}" if mark.failing else f"{indent}⚪ {said}")
    for i in incidents:
        title = escape(clip(i.title, TITLE_CHARS))
        lines.append(f"{indent}🚨 open incident {labelled_link(i.url, f'#{i.number}')} {title} ({escape(i.status)})")
    return lines


def now_plain(live: Present, mark: LiveMark | None, incidents: Sequence[Incident], indent: str = "      ") -> list[str]:
    """The same lines as plain text, for an answer's attached full text."""
    lines = [f"{indent}{'now: ' if mark.failing else ''}{mark_text(mark, live)}"] if mark is not None else []
    return lines + [f"{indent}{incident_text(i)} {i.url}".rstrip() for i in incidents]


def live_context(live: Present) -> list[Block]:
    """The one line citing the live part, or saying it is missing; none without a live part."""
    if not live.configured:
        return []
    return [context(("⚠ " if live.missing else "") + escape(live.said()))]

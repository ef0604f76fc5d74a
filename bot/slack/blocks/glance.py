"""An entity at a glance, on one line: what breaks if it goes down, its owners, its last deploy.

The line of a pasted link's unfurl and of each entity on a team's App Home. Pure: `now` is passed in.
"""

from __future__ import annotations

from datetime import datetime

from bot.query.glance import Glance
from bot.render.wording import format_age
from bot.slack.blocks.kit import Block, context, escape, labelled_link, name, names, section
from graph.facts import Deploy
from graph.naming.refs import ref_parts

UNFURL_LABEL = "oncall-graph"


def glance_line(found: Glance, now: datetime) -> str:
    """`*payments* (component) · if it goes down: 4 break, 2 degrade (checkout, …) · owners: … · last deploy: …`"""
    kind = ref_parts(found.entity).kind
    named = f"*{escape(name(found.entity))}* ({escape(kind)})"
    return " · ".join([named, _impact(found), _owners(found), _deploy(found.last_deploy, now)])


def format_unfurl(found: Glance, now: datetime) -> dict[str, object]:
    """The unfurl of one entity page's link: chat.unfurl's value for its URL."""
    blocks: list[Block] = [section(glance_line(found, now)), context(escape(UNFURL_LABEL))]
    return {"blocks": blocks}


def _impact(found: Glance) -> str:
    if not found.breaks and not found.degrades:
        return "nothing in the graph depends on it"
    more = ", …" if found.breaks + found.degrades > len(found.nearest) else ""
    nearest = f" ({escape(names(list(found.nearest), len(found.nearest)))}{more})" if found.nearest else ""
    return f"if it goes down: {found.breaks} break, {found.degrades} degrade{nearest}"


def _owners(found: Glance) -> str:
    return f"owners: {escape(names(list(found.owners)))}" if found.owners else "no known owner"


def _deploy(deploy: Deploy | None, now: datetime) -> str:
    if deploy is None:
        return "no deploy known"
    version = f" {escape(deploy.version)}" if deploy.version else ""
    shown = labelled_link(deploy.url, deploy.id) if deploy.url else escape(deploy.id)
    return f"last deploy: {shown}{version}, {format_age((now - deploy.deployed_at).total_seconds())} ago"

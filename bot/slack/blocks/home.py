"""The App Home tab: what the person's teams own, what depends on each, the graph's freshness, and
for admins the sources' lag and coverage (the /graph-lag report's blocks). Pure: `now` is passed in."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.query.glance import GlanceAnswer
from bot.slack.blocks.freshness import freshness_blocks
from bot.slack.blocks.glance import glance_line
from bot.slack.blocks.kit import Block, divider, escape, header, names, pack, section
from graph.ownership import SLACK_ID

MAX_VIEW_BLOCKS = 100  # Slack's limit for a Home tab view
HOME_TITLE = "oncall-graph"
LOADING = "The graph is still loading; open this tab again in a minute."


def format_home(
    teams: Sequence[str], owned: int, answer: GlanceAnswer, now: datetime, *, admin: Sequence[Block] = ()
) -> dict[str, object]:
    """`teams`: the person's catalog users and groups; `owned`: how many entities they own in all,
    of which `answer` holds those shown (the most depended-on first, hidden ones left out)."""
    blocks: list[Block] = [header(HOME_TITLE)]
    if not teams:
        blocks.append(section(
            "No catalog user carries your Slack member id, so oncall-graph does not know your teams. Add"
            f" `{SLACK_ID}: <your member id>` to your User entity's annotations in the catalog."))  # fmt: skip
    elif not answer.glances:
        blocks.append(section(f"*{escape(names(list(teams)))}* own nothing in the graph you may see."))
    else:
        more = f", the {len(answer.glances)} most depended-on shown" if owned > len(answer.glances) else ""
        blocks.append(section(f"*Owned by {escape(names(list(teams)))}* ({owned} entities{more}):"))
        blocks += pack(glance_line(g, now) for g in answer.glances)
    warning, footer = freshness_blocks(answer.freshness)
    blocks += [*warning, footer]
    if admin:
        blocks += [divider(), *admin]
    return {"type": "home", "blocks": blocks[:MAX_VIEW_BLOCKS]}


def format_loading() -> dict[str, object]:
    return {"type": "home", "blocks": [header(HOME_TITLE), section(escape(LOADING))]}

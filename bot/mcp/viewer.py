"""Who the MCP server answers as: a Slack viewer configured by the operator, an outsider by default.

An agent's answers can end up anywhere (a ticket, a chat, another model's prompt), so the server
never assumes it may see restricted entities: `--as-user`/`--as-channel` (or
ONCALL_GRAPH_MCP_AS_USER / ONCALL_GRAPH_MCP_AS_CHANNEL) name whose view it gives, and only an
explicit `--all` gives the operator's view of everything.
"""

from __future__ import annotations

import argparse

from bot.settings import Settings
from graph.exposure.visibility import EVERYONE, Viewer


def mcp_viewer(args: argparse.Namespace, settings: Settings) -> Viewer:
    """The options first, then the environment; `--all` wins only when given explicitly."""
    if getattr(args, "all", False):
        return EVERYONE
    user = (getattr(args, "as_user", None) or settings.mcp_as_user).strip()
    channel = (getattr(args, "as_channel", None) or settings.mcp_as_channel).strip()
    return Viewer(channel=channel, user=user)


def describe_viewer(viewer: Viewer) -> str:
    """For the operator's log on stderr."""
    if viewer.everything:
        return "an operator (--all: restricted entities included)"
    who = [f"user {viewer.user}"] * bool(viewer.user) + [f"channel {viewer.channel}"] * bool(viewer.channel)
    return " and ".join(who) if who else "an outsider (restricted entities hidden)"

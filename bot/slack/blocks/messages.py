"""Every Slack answer as a `SlackMessage`: pure formatters, no client, no clock (`now` is passed in).

The query views live in `blast`, `suspects`, `answer` (a question's per-ask sections) and
`freshness`; this module is the one place handlers import from, and holds the small messages
(unresolved names, refusals).
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.slack.blocks.answer import format_answer
from bot.slack.blocks.blast import format_blast_radius
from bot.slack.blocks.freshness import format_lag, format_lag_alert
from bot.slack.blocks.kit import (
    SECTION_CHARS,
    SlackMessage,
    actions,
    button,
    clip,
    context,
    escape,
    message,
    section,
    text_length,
)
from bot.slack.blocks.suspects import format_alert_reply, format_suspects
from graph.naming.names import Resolution
from graph.naming.refs import ref_parts, short_name

__all__ = [
    "SlackMessage",
    "format_alert_reply",
    "format_answer",
    "format_blast_radius",
    "format_lag",
    "format_lag_alert",
    "format_refusal",
    "format_suspects",
    "format_unresolved",
    "text_length",
]

PICKS_SHOWN = 10
EXAMPLE_REF = "`component:default/NAME`"


def format_refusal(text: str) -> SlackMessage:
    """A short notice (usage, refusal, still loading): one section, meant to be ephemeral."""
    return message(text, [section(escape(clip(text, SECTION_CHARS)))])


def format_unresolved(
    query: str, resolution: Resolution, *, command: str, args: Mapping[str, object] | None = None
) -> SlackMessage:
    """ "no entity named X" or "X is ambiguous", each candidate a button that re-runs `command` on it.

    Button values are `{"cmd": command, "name": ref, **args}`, `args` carrying the command's
    options (depth, since) so the re-run answers the same question.
    """
    shown = clip(query, 200)
    if resolution.ambiguous:
        picks = resolution.candidates
        text = f"{shown} is ambiguous"
        intro = f"*{escape(shown)}* is ambiguous: it names {len(picks)} entities. Which one did you mean?"
    else:
        picks = resolution.suggestions
        text = f"no entity named {shown}"
        intro = f"No entity named *{escape(shown)}* in the graph."
        intro += (
            " Did you mean:" if picks else " Nothing similar either; try its full ref, e.g. `component:default/NAME`."
        )
    buttons = [
        button(_pick_label(ref), f"pick_entity_{i}", {"cmd": command, "name": ref, **(args or {})})
        for i, ref in enumerate(picks[:PICKS_SHOWN])
    ]
    blocks = [section(intro), *actions(buttons)]
    if picks:
        listed = ", ".join(escape(clip(ref, 200)) for ref in picks[:PICKS_SHOWN])
        more = f" and {len(picks) - PICKS_SHOWN} more" if len(picks) > PICKS_SHOWN else ""
        blocks.append(context(f"{listed}{more}"))
    return message(text, blocks)


def _pick_label(ref: str) -> str:
    """`redis (resource)`: two candidates often share a name and differ by kind."""
    return f"{short_name(ref)} ({ref_parts(ref).kind})"

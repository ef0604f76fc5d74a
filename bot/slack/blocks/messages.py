"""Every Slack answer as a `SlackMessage`: pure formatters, no client, no clock (`now` is passed in).

The query views live in `blocks_blast`, `blocks_suspects` and `blocks_freshness`; this module is
the one place handlers import from, and holds the small messages (unresolved names, mentions,
refusals).
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.model.ports import Phrasing
from bot.render.freshness import Freshness
from bot.render.labels import labelled_lines
from bot.slack.blocks.blast import format_blast_radius
from bot.slack.blocks.freshness import format_lag, format_lag_alert, freshness_blocks, graph_age, stale_prefix
from bot.slack.blocks.kit import (
    FALLBACK_CHARS,
    SECTION_CHARS,
    TEXT_BUDGET,
    SlackMessage,
    actions,
    button,
    clip,
    context,
    escape,
    fit,
    message,
    pack,
    section,
    text_length,
)
from bot.slack.blocks.suspects import format_alert_reply, format_suspects
from graph.naming.names import Resolution
from graph.naming.refs import ref_parts, short_name
from graph.questions.ask import Answer

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
CITED_CHARS = 400
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


def format_answer(
    answer: Answer,
    freshness: Freshness,
    *,
    phrasing: Phrasing | None = None,
) -> SlackMessage:
    """A mention's answer: its sentences (or the model's phrasing of them, marked as such), then the
    cited edges they rest on, in a code block, labelled with the ids the phrasing cites."""
    warning, footer = freshness_blocks(freshness)
    marker = [context(escape(phrasing.marker))] if phrasing else []
    fixed = [*warning, *marker, footer]
    room = TEXT_BUDGET - text_length(fixed) - 200
    said_lines = (phrasing.text,) if phrasing else answer.sentences
    longest = SECTION_CHARS - 100 if phrasing else SECTION_CHARS // 2
    sentences = [escape(clip(s, longest)) for s in said_lines]
    said = fit(sentences, room * 2 // 3)
    cited = [escape(clip(line, CITED_CHARS)) for line in labelled_lines(answer, phrasing)]
    quoted = fit(cited, room - sum(len(s) + 1 for s in sentences[:said]) - 100)
    body = pack(sentences[:said]) + marker
    if quoted:
        body += pack(cited[:quoted], fence="```")
    cut = said < len(sentences) or quoted < len(cited) or any(len(s) > longest for s in said_lines)
    if cut:
        body.append(section(f"_… the full answer ({len(cited)} cited edges) is attached_"))
    phrased = f"{phrasing.text}\n({phrasing.marker})\n" if phrasing else ""
    full = (lambda: f"{phrased}{answer.text}\n{graph_age(freshness)}\n") if cut else None
    first = answer.sentences[0] if answer.sentences else "No answer."
    return message(stale_prefix(freshness) + clip(first, FALLBACK_CHARS), [*warning, *body, footer], full)

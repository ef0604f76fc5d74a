"""Extracted edges awaiting review, for admins in Slack: each with its evidence, its document chunk and
model, and Approve / Reject buttons. Pure formatters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.render.wording import plural
from bot.slack.blocks.kit import (
    MAX_BLOCKS,
    Block,
    SlackMessage,
    actions,
    button,
    clip,
    code,
    context,
    escape,
    header,
    message,
    section,
)
from graph.review import ProposedEdge

EDGES_SHOWN = 10
EVIDENCE_CHARS = 500
OPEN, APPROVE, REJECT = "review_extracted", "review_approve", "review_reject"


def with_review_button(answer: SlackMessage, pending: int) -> SlackMessage:
    """`answer` (the /graph-lag report) with a "Review N extracted edges" button when any await review."""
    if pending <= 0 or len(answer.blocks) >= MAX_BLOCKS:
        return answer
    label = f"Review {plural(pending, 'extracted edge')}"
    return replace(answer, blocks=(*answer.blocks, *actions([button(label, OPEN, {"cmd": "review"})])))


def format_review_queue(total: int, edges: Sequence[ProposedEdge], *, note: str = "") -> SlackMessage:
    """The first edges awaiting review, oldest first; `note` says what the last click did."""
    blocks: list[Block] = [header("Extracted edges awaiting review")]
    if note:
        blocks.append(context(escape(note)))
    if not edges:
        blocks.append(section("Nothing awaits review."))
        return message(f"{note} Nothing awaits review.".strip(), blocks)
    for edge in edges[:EDGES_SHOWN]:
        blocks.append(section(_edge_text(edge)))
        blocks += actions(
            [_styled("Approve", APPROVE, edge.id, "primary"), _styled("Reject", REJECT, edge.id, "danger")]
        )
    if total > len(edges[:EDGES_SHOWN]):
        more = total - len(edges[:EDGES_SHOWN])
        blocks.append(context(f"… and {more} more: decide these to see the next, or run `oncall-graph review`"))
    return message(f"{plural(total, 'extracted edge')} awaiting review", blocks)


def _edge_text(edge: ProposedEdge) -> str:
    evidence = escape(clip(edge.evidence, EVIDENCE_CHARS))
    return (
        f"*#{edge.id}*  {code(edge.src)} -{escape(edge.rel)}-> {code(edge.dst)}\n> {evidence}\n_{escape(edge.where)}_"
    )


def _styled(label: str, action_id: str, edge_id: int, style: str) -> Block | None:
    found = button(label, action_id, {"id": edge_id})
    return None if found is None else {**found, "style": style}


def decision_note(edge: ProposedEdge, user: str) -> str:
    return f"{edge.status} #{edge.id} ({edge.src} {edge.rel} {edge.dst}) by {user}"

"""The review queue in Block Kit: evidence and citation per edge, Approve/Reject buttons, Slack's limits."""

from __future__ import annotations

import json

from bot.slack.blocks.kit import MAX_BLOCKS, TEXT_BUDGET, text_length
from bot.slack.blocks.messages import format_refusal
from bot.slack.blocks.review import EDGES_SHOWN, format_review_queue, with_review_button
from graph.review import ChunkRef, ProposedEdge


def edge(edge_id: int, evidence: str = "Shipping reads addresses from the <inventory-db>.") -> ProposedEdge:
    chunk = ChunkRef("runbooks/shipping.md", 1, 1, 8)
    return ProposedEdge(edge_id, "shipping", "reads_from", "inventory-db", evidence, chunk, 4, "claude-haiku-4-5")


def test_each_edge_shows_its_evidence_citation_and_two_buttons_carrying_its_id() -> None:
    queue = format_review_queue(1, [edge(7)], note="approved #6 (a uses b) by U1")
    text = json.dumps(queue.blocks)
    assert "&lt;inventory-db&gt;" in text  # escaped: a document cannot inject Slack markup
    assert "runbooks/shipping.md:4 (chunk 1, lines 1-8, claude-haiku-4-5)" in text and "approved #6" in text
    [row] = [b for b in queue.blocks if b["type"] == "actions"]
    assert [(e["action_id"], json.loads(e["value"]), e["style"]) for e in row["elements"]] == [
        ("review_approve", {"id": 7}, "primary"),
        ("review_reject", {"id": 7}, "danger"),
    ]


def test_a_long_queue_stays_within_slack_limits_and_says_how_many_more() -> None:
    edges = [edge(i, "x" * 3000) for i in range(1, 40)]
    queue = format_review_queue(39, edges)
    assert len(queue.blocks) <= MAX_BLOCKS and text_length(queue.blocks) <= TEXT_BUDGET
    assert sum(b["type"] == "actions" for b in queue.blocks) == EDGES_SHOWN
    assert f"and {39 - EDGES_SHOWN} more" in json.dumps(queue.blocks)
    assert "Nothing awaits review" in json.dumps(format_review_queue(0, []).blocks)


def test_the_lag_report_gets_a_review_button_only_when_edges_wait() -> None:
    report = format_refusal("lag report")
    assert with_review_button(report, 0) is report
    [row] = [b for b in with_review_button(report, 3).blocks if b["type"] == "actions"]
    assert row["elements"][0]["text"]["text"] == "Review 3 extracted edges"
    assert row["elements"][0]["action_id"] == "review_extracted"

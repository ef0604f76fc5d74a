"""The runbook passages quoted beside a Slack answer: one context block, where each is and how it starts.

Pure. The passages are chosen (and filtered for the viewer) before they get here.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.slack.blocks.kit import Block, code, context, escape, name
from graph.exposure.passages import CitedPassage, snippet

SNIPPET_CHARS = 140  # per passage: three of them stay well inside a context block and the budget


def passages_blocks(passages: Sequence[CitedPassage]) -> list[Block]:
    """A context block naming each passage's section and its opening words; none without passages."""
    if not passages:
        return []
    lines = [
        f"📖 {code(c.locator)} ({escape(name(c.entity))}) {escape(snippet(c.passage, SNIPPET_CHARS))}" for c in passages
    ]
    return [context("*Runbooks*\n" + "\n".join(lines))]


def passages_plain(passages: Sequence[CitedPassage]) -> list[str]:
    """The same passages for the plain-text attachment: each one whole, under its locator."""
    lines = []
    for c in passages:
        lines.append(f"Runbooks: {c.locator} ({name(c.entity)})")
        lines += [f"    {line}" for line in c.text.split("\n")]
    return lines

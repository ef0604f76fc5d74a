"""What the bot answers to a command, as a SlackMessage: parse the arguments, resolve, walk, format.

No Slack client here: handlers deliver the message.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from bot.query.durations import parse_window
from bot.render.dot import blast_dot, suspects_dot
from bot.slack.blocks.messages import (
    SlackMessage,
    format_blast_radius,
    format_refusal,
    format_suspects,
    format_unresolved,
)
from bot.slack.deps import BotDeps
from bot.telemetry.instrument import note_counts, note_entities
from graph.blast import blast_radius
from graph.passages import cite_passages
from graph.snapshot import Snapshot
from graph.suspects import suspects
from graph.visibility import Viewer, resolve_for

BLAST, SUSPECTS = "blast-radius", "suspects"
DEFAULT_WINDOW = timedelta(hours=6)
LOADING = "The graph is still loading; try again in a minute."
_WINDOW_TOKEN = re.compile(r"^\d+(\.\d+)?\s*(s|m|h|d|w)$", re.IGNORECASE)


def split_blast_args(text: str) -> tuple[str, int | None]:
    """`redis 2` -> ("redis", 2); `token cache` -> ("token cache", None)."""
    words = text.split()
    if len(words) > 1 and words[-1].isdigit() and int(words[-1]) > 0:
        return " ".join(words[:-1]), int(words[-1])
    return " ".join(words), None


def split_suspects_args(text: str) -> tuple[str, timedelta]:
    """`payments 6h` -> ("payments", 6 hours); the window defaults to six hours."""
    words = text.split()
    if len(words) > 1 and _WINDOW_TOKEN.match(words[-1]):
        return " ".join(words[:-1]), parse_window(words[-1])
    return " ".join(words), DEFAULT_WINDOW


def reply_to_command(
    deps: BotDeps, snapshot: Snapshot | None, command: str, text: str, viewer: Viewer, *, shared: bool = False
) -> SlackMessage:
    if snapshot is None:
        return format_refusal(LOADING)
    if command == BLAST:
        name, depth = split_blast_args(text)
        window = DEFAULT_WINDOW
    else:
        name, window = split_suspects_args(text)
        depth = None
    if not name:
        usage = "/blast-radius NAME [depth]" if command == BLAST else "/suspects NAME [since, e.g. 6h]"
        return format_refusal(f"Usage: {usage}")
    resolution = resolve_for(snapshot, name, viewer)
    if resolution.entity is None:
        # A name hidden from this asker is no gap in the catalog: it is counted, but not by name.
        deps.metrics.unresolved_name(command, name, by_name=not snapshot.aliases.names_one(name))
        return format_unresolved(name, resolution, command=command)
    note_entities(resolution.entity)
    now = deps.clock()
    if command == BLAST:
        result = blast_radius(snapshot, resolution.entity, max_depth=depth, viewer=viewer)
        note_counts(impacted=result.impacted_count)
        quoted = cite_passages(snapshot, result.subjects(), viewer=viewer)
        message = format_blast_radius(
            result, snapshot, now=now, stale_after=deps.stale_after, shared=shared, passages=quoted
        )
        return replace(message, draw_picture=lambda: blast_dot(result))
    found = suspects(snapshot, resolution.entity, now=now, window=window, viewer=viewer)
    note_counts(dependencies=len(found.dependencies))
    quoted = cite_passages(snapshot, found.subjects(), viewer=viewer)
    message = format_suspects(found, snapshot, now=now, stale_after=deps.stale_after, shared=shared, passages=quoted)
    return replace(message, draw_picture=lambda: suspects_dot(found, snapshot))

"""Blast radius and suspects, asked by name: resolved for the viewer, walked, passages quoted, freshness judged."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from datetime import datetime

from bot.query.bundle import BlastAnswer, BlastQuery, Resolved, SuspectsAnswer, SuspectsQuery
from bot.query.live import LiveSource, begin, looked
from bot.render.freshness import Freshness, freshness_of
from bot.telemetry.tracing import stage_span
from graph.exposure.passages import cite_passages
from graph.exposure.visibility import Viewer, resolve_for
from graph.health.freshness import StalePolicy
from graph.snapshot import Snapshot
from graph.traffic.live import live_suspects
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects


def resolve_name(snapshot: Snapshot, name: str, viewer: Viewer) -> Resolved:
    """A name as this viewer may resolve it; a name hidden from them is no gap in the catalog."""
    resolution = resolve_for(snapshot, name, viewer)
    hidden = resolution.entity is None and snapshot.aliases.names_one(name)
    return Resolved(resolution, named_elsewhere=hidden)


def answer_blast(
    snapshot: Snapshot,
    query: BlastQuery,
    viewer: Viewer,
    now: datetime,
    policy: StalePolicy,
    live: LiveSource | None = None,
    *,
    cpu: AbstractContextManager[object] | None = None,
) -> BlastAnswer:
    """What breaks if the named entity goes down, with the passages to quote and, with a live port,
    what is failing now (read while the graph is walked). The walk runs inside `cpu` (the bot's work
    slots); the wait for the live part does not."""
    with cpu or nullcontext():
        resolved, freshness = _grounded(snapshot, query.name, viewer, now, policy)
        if resolved.entity is None:
            return BlastAnswer(query, resolved, freshness)
        pending = begin(live)
        with stage_span("walk"):
            result = blast_radius(snapshot, resolved.entity, max_depth=query.depth, viewer=viewer)
        with stage_span("passages"):
            quoted = cite_passages(snapshot, result.subjects(), viewer=viewer)
    with stage_span("live"):
        present = looked(snapshot, pending, viewer)
    return BlastAnswer(query, resolved, freshness, result, quoted, present)


def _grounded(
    snapshot: Snapshot, name: str, viewer: Viewer, now: datetime, policy: StalePolicy
) -> tuple[Resolved, Freshness]:
    """The entity a name means to this viewer and the graph's freshness, each its own stage."""
    with stage_span("resolution"):
        resolved = resolve_name(snapshot, name, viewer)
    with stage_span("freshness"):
        return resolved, freshness_of(snapshot, now, policy)


def answer_suspects(
    snapshot: Snapshot,
    query: SuspectsQuery,
    viewer: Viewer,
    now: datetime,
    policy: StalePolicy,
    live: LiveSource | None = None,
    *,
    cpu: AbstractContextManager[object] | None = None,
) -> SuspectsAnswer:
    """What the named entity depends on and which of those were deployed in the window ending `query.at`;
    with a live port, those failing now first (the wait for it outside `cpu`, as for `answer_blast`)."""
    with cpu or nullcontext():
        resolved, freshness = _grounded(snapshot, query.name, viewer, now, policy)
        if resolved.entity is None:
            return SuspectsAnswer(query, resolved, freshness)
        pending = begin(live)
        at = query.at or now
        with stage_span("walk"):
            result = suspects(
                snapshot, resolved.entity, now=at, window=query.since, max_depth=query.depth, viewer=viewer
            )
        with stage_span("passages"):
            quoted = cite_passages(snapshot, result.subjects(), viewer=viewer)
    with stage_span("live"):
        present = looked(snapshot, pending, viewer)
    with cpu or nullcontext():
        ranked = live_suspects(result, present)
    return SuspectsAnswer(query, resolved, freshness, ranked, quoted, present)

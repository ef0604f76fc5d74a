"""The small question kinds: resolve a name, the path between two, the hygiene report, drift."""

from __future__ import annotations

from datetime import datetime

from bot.query.blast import resolve_name
from bot.query.bundle import DriftAnswer, LintAnswer, PathAnswer, ResolveAnswer
from bot.render.freshness import freshness_of
from graph.exposure.visibility import Viewer
from graph.health.freshness import StalePolicy
from graph.health.hygiene import lint
from graph.snapshot import Snapshot
from graph.traffic.drift import drift
from graph.walks.paths import find_path


def answer_resolve(snapshot: Snapshot, name: str, viewer: Viewer, now: datetime, policy: StalePolicy) -> ResolveAnswer:
    return ResolveAnswer(resolve_name(snapshot, name, viewer), freshness_of(snapshot, now, policy))


def answer_path(
    snapshot: Snapshot, ends: tuple[str, str], viewer: Viewer, now: datetime, policy: StalePolicy
) -> PathAnswer:
    """The shortest cited chain between two names (each end resolved as this viewer may)."""
    src, dst = resolve_name(snapshot, ends[0], viewer), resolve_name(snapshot, ends[1], viewer)
    freshness = freshness_of(snapshot, now, policy)
    if src.entity is None or dst.entity is None:
        return PathAnswer((src, dst), freshness)
    return PathAnswer((src, dst), freshness, find_path(snapshot, src.entity, dst.entity, viewer=viewer))


def answer_lint(snapshot: Snapshot, viewer: Viewer, now: datetime, policy: StalePolicy) -> LintAnswer:
    """The hygiene report is an operator's view of the whole graph: the viewer is taken for the record only."""
    return LintAnswer(lint(snapshot), freshness_of(snapshot, now, policy))


DRIFT_LIMIT = 200  # of each list: what a person or an agent reads; the totals count the rest


def answer_drift(
    snapshot: Snapshot, viewer: Viewer, now: datetime, policy: StalePolicy, *, limit: int | None = None
) -> DriftAnswer:
    """Where the catalog and the traffic disagree: edges between entities this viewer may not see left
    out; at most `limit` of each list (None or 0: all)."""
    return DriftAnswer(drift(snapshot, viewer, limit=limit or None), freshness_of(snapshot, now, policy))

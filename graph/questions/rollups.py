"""Per-snapshot rollups for questions about everything: entities ranked by how much breaks with them.

Computed once per built graph, on the first broad question, and kept beside it (keyed by its walk
index, like the blast radius's own per-graph arrays), never as a snapshot attribute. A full blast
radius per entity is one walk over the edges each; at 100k entities that is too many, so only the
most directly depended-on entities are walked, and the ranking says how many it considered.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

import numpy as np

from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius, runtime_mask
from graph.walks.compiled import WalkIndex, walk_index

CANDIDATES = 300  # entities walked for the ranking: the most directly depended-on


@dataclass(frozen=True, slots=True)
class Exposure:
    """What one entity's failure takes with it."""

    entity: str
    breaks: int
    degrades: int
    dependents: int  # direct
    systems: tuple[tuple[str, int, int], ...]  # (system, its parts impacted, its parts), most hit first


@dataclass(frozen=True, slots=True)
class Ranking:
    exposures: tuple[Exposure, ...]  # most breaking first; only entities whose failure breaks something
    considered: int
    runtime: int  # components and resources in the graph


_RANKINGS: WeakKeyDictionary[WalkIndex, Ranking] = WeakKeyDictionary()


def ranking(snapshot: Snapshot) -> Ranking:
    """Entities ranked by how much breaks when they fail (then degrades, then by ref), once per graph."""
    index = walk_index(snapshot)
    found = _RANKINGS.get(index)
    if found is None:
        found = _RANKINGS[index] = _rank(snapshot)
    return found


def _rank(snapshot: Snapshot) -> Ranking:
    index = walk_index(snapshot)
    runtime = runtime_mask(snapshot)
    direct = np.diff(index.indptr)
    eligible = np.flatnonzero(runtime & (direct > 0))
    order = eligible[np.argsort(-direct[eligible], kind="stable")][:CANDIDATES]
    exposures = []
    for position in order.tolist():
        ref = index.refs[position]
        radius = blast_radius(snapshot, ref)
        if radius.breaks_count == 0:
            continue
        hit = sorted(radius.systems, key=lambda s: (-s.impacted, s.entity))
        systems = tuple((s.entity, s.impacted, s.total) for s in hit)
        exposures.append(Exposure(ref, radius.breaks_count, radius.degrades_count, int(direct[position]), systems))
    exposures.sort(key=lambda e: (-e.breaks, -e.degrades, e.entity))
    return Ranking(tuple(exposures), len(order), int(np.count_nonzero(runtime)))

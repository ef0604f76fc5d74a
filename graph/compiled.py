"""A compressed-sparse-row copy of the failure-propagating edges, for walks over large graphs.

networkx stays the model; this is the index the hot walks need. Reachability runs level by level
over numpy arrays (one pass over the edges), and the "most corroborated shortest path" is only
computed when someone asks for paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from graph.relations import propagates

if TYPE_CHECKING:
    from graph.snapshot import Snapshot

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
UNREACHED = -1


@dataclass(frozen=True, eq=False)
class WalkIndex:
    """Dependents of each entity over propagating edges, one slot per (dependent, dependency) pair."""

    refs: tuple[str, ...]
    position: Mapping[str, int]
    indptr: IntArray  # dependency i's dependents are indices[indptr[i]:indptr[i+1]]
    indices: IntArray
    hard: BoolArray  # the pair has at least one edge that is not a soft dependency
    rank_all: IntArray  # best rank among the pair's edges
    rank_hard: IntArray  # best rank among the pair's hard edges (meaningless where not hard)


def compile_walk_index(snapshot: Snapshot) -> WalkIndex:
    refs = tuple(sorted(snapshot.entities))
    position = {ref: i for i, ref in enumerate(refs)}
    pairs: dict[tuple[int, int], list[int]] = {}
    for dependent, edges in snapshot.out_edges.items():
        u = position[dependent]
        for e in edges:
            if not propagates(e.rel):
                continue
            slot = pairs.setdefault((position[e.dst], u), [0, -1, -1])
            slot[0] |= not e.soft
            slot[1] = max(slot[1], e.rank)
            if not e.soft:
                slot[2] = max(slot[2], e.rank)
    keys = np.array(list(pairs), dtype=np.int64).reshape(-1, 2)
    values = np.array(list(pairs.values()), dtype=np.int64).reshape(-1, 3)
    order = np.lexsort((keys[:, 1], keys[:, 0]))
    keys, values = keys[order], values[order]
    indptr = np.zeros(len(refs) + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys[:, 0], minlength=len(refs)), out=indptr[1:])
    return WalkIndex(
        refs=refs,
        position=position,
        indptr=indptr,
        indices=keys[:, 1].copy(),
        hard=values[:, 0].astype(bool),
        rank_all=values[:, 1].copy(),
        rank_hard=values[:, 2].copy(),
    )


def _expand(index: WalkIndex, frontier: IntArray) -> tuple[IntArray, IntArray]:
    """(edge slots, source node of each slot) for every dependent of the frontier."""
    starts = index.indptr[frontier]
    counts = index.indptr[frontier + 1] - starts
    total = int(counts.sum())
    if total == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    offsets = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    slots = offsets + np.arange(total, dtype=np.int64)
    return slots, np.repeat(frontier, counts)


def reverse_levels(index: WalkIndex, start: int, *, hard_only: bool, max_depth: int | None) -> IntArray:
    """Hops from `start` to every entity that transitively depends on it (UNREACHED elsewhere)."""
    dist = np.full(len(index.refs), UNREACHED, dtype=np.int64)
    dist[start] = 0
    frontier = np.array([start], dtype=np.int64)
    depth = 0
    while frontier.size and (max_depth is None or depth < max_depth):
        slots, _ = _expand(index, frontier)
        if hard_only:
            slots = slots[index.hard[slots]]
        found = index.indices[slots]
        found = found[dist[found] == UNREACHED]
        if not found.size:
            break
        depth += 1
        dist[found] = depth
        frontier = np.unique(found)
    return dist


def best_parents(index: WalkIndex, dist: IntArray, *, hard_only: bool) -> IntArray:
    """For each reached entity, the next hop towards `start` on its most corroborated shortest path.

    Path score = sum of edge ranks; ties go to the lower entity position, so results are stable.
    """
    parent = np.full(len(index.refs), UNREACHED, dtype=np.int64)
    score = np.zeros(len(index.refs), dtype=np.int64)
    rank = index.rank_hard if hard_only else index.rank_all
    levels = int(dist.max(initial=0))
    for depth in range(1, levels + 1):
        frontier = np.flatnonzero(dist == depth - 1)
        slots, sources = _expand(index, frontier)
        if hard_only:
            keep = index.hard[slots]
            slots, sources = slots[keep], sources[keep]
        targets = index.indices[slots]
        on_level = dist[targets] == depth
        slots, sources, targets = slots[on_level], sources[on_level], targets[on_level]
        candidate = score[sources] + rank[slots]
        order = np.lexsort((sources, -candidate, targets))
        first = np.ones(order.size, dtype=bool)
        first[1:] = targets[order][1:] != targets[order][:-1]
        chosen = order[first]
        parent[targets[chosen]] = sources[chosen]
        score[targets[chosen]] = candidate[chosen]
    return parent

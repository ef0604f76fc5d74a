"""A compressed-sparse-row copy of the failure-propagating edges, for walks over large graphs.

networkx stays the model; this is the index the hot walks need. Reachability runs level by level
over numpy arrays (one pass over the edges), and the "most corroborated shortest path" is only
computed when someone asks for paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from graph.background import stepping
from graph.relations import propagates

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

    from graph.snapshot import Snapshot

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
UNREACHED = -1
_WALK_INDEX = f"{__name__}.walk_index"  # this module's key in `Snapshot.derived`


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

    @cached_property
    def any_soft(self) -> bool:
        """False when no pair is soft: a hard-only walk is then the same as a walk over everything."""
        return not bool(self.hard.all())

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (the snapshot image) without the matrices: rebuilt on first use from the arrays."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_csr_")}

    def dependents(self, *, hard_only: bool) -> csr_matrix:
        """The pairs as scipy's walks take them (int32 indices, float weights), built once: a walk
        given any other types copies the whole matrix first."""
        key = "hard" if hard_only and self.any_soft else "all"
        found: csr_matrix | None = self.__dict__.get(f"_csr_{key}")
        if found is None:
            # Imported here: scipy.sparse adds 0.2 s to every start; `graph.warm` builds these
            # before a snapshot serves, so no answer waits for it.
            from scipy.sparse import csr_matrix

            indptr, indices = self.indptr, self.indices
            if key == "hard":
                kept = np.flatnonzero(self.hard)
                indices = indices[kept]
                indptr = np.searchsorted(kept, indptr).astype(np.int64)
            size = len(self.refs)
            weights = np.ones(indices.size, dtype=np.float64)
            found = csr_matrix(
                (weights, indices.astype(np.int32), indptr.astype(np.int32)), shape=(size, size), copy=False
            )
            self.__dict__[f"_csr_{key}"] = found
        return found


def walk_index(snapshot: Snapshot) -> WalkIndex:
    """The snapshot's walk index: compiled on first use, once per built graph."""
    index: WalkIndex | None = snapshot.derived.get(_WALK_INDEX)
    if index is None:
        index = snapshot.derived[_WALK_INDEX] = compile_walk_index(snapshot)
    return index


def compile_walk_index(snapshot: Snapshot) -> WalkIndex:
    refs = tuple(sorted(snapshot.entities))
    position = {ref: i for i, ref in enumerate(refs)}
    # Columns first, then grouped by sorting: a dict of pairs filled edge by edge took 4 s and
    # 300 MB at a million edges (bench dense-100k).
    edges = [e for edges in stepping(snapshot.out_edges.values()) for e in edges if propagates(e.rel)]
    dependency = np.fromiter((position[e.dst] for e in stepping(edges)), dtype=np.int64, count=len(edges))
    dependent = np.fromiter((position[e.src] for e in stepping(edges)), dtype=np.int64, count=len(edges))
    soft = np.fromiter((e.soft for e in edges), dtype=bool, count=len(edges))
    rank = np.fromiter((e.rank for e in edges), dtype=np.int64, count=len(edges))
    del edges
    pair = dependency * len(refs) + dependent
    order = np.argsort(pair, kind="stable")
    pair, soft, rank = pair[order], soft[order], rank[order]
    starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]]) if pair.size else pair
    pairs = pair[starts]
    indptr = np.zeros(len(refs) + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs // max(len(refs), 1), minlength=len(refs)), out=indptr[1:])
    return WalkIndex(
        refs=refs,
        position=position,
        indptr=indptr,
        indices=pairs % max(len(refs), 1),
        hard=_reduce(np.logical_or, ~soft, starts).astype(bool),
        rank_all=_reduce(np.maximum, rank, starts),
        rank_hard=_reduce(np.maximum, np.where(soft, -1, rank), starts),
    )


def _reduce(ufunc: np.ufunc, values: npt.NDArray[Any], starts: IntArray) -> npt.NDArray[Any]:
    return ufunc.reduceat(values, starts) if starts.size else values[:0]


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
    """Hops from `start` to every entity that transitively depends on it (UNREACHED elsewhere).

    One breadth-first walk in scipy's C loop (numpy level by level took twice as long at a
    million edges, bench dense-100k); the hops are read from its order: each entity was found
    while its predecessor was visited, and visits go in that same order, so a level ends where
    the first entity found from the next level's members begins."""
    from scipy.sparse.csgraph import breadth_first_order  # loaded with `dependents` (see there)

    order, predecessors = breadth_first_order(
        index.dependents(hard_only=hard_only), start, directed=True, return_predecessors=True
    )
    dist = np.full(len(index.refs), UNREACHED, dtype=np.int64)
    visited = np.empty(len(index.refs), dtype=np.int64)
    visited[order] = np.arange(order.size)
    found_while = visited[predecessors[order[1:]]]  # non-decreasing: when each was found
    end, depth = 1, 0
    dist[start] = 0
    while end < order.size and (max_depth is None or depth < max_depth):
        next_end = 1 + int(np.searchsorted(found_while, end, side="left"))
        depth += 1
        dist[order[end:next_end]] = depth
        end = next_end
    return dist


def best_parents(index: WalkIndex, dist: IntArray, *, hard_only: bool, up_to: int | None = None) -> IntArray:
    """For each reached entity, the next hop towards `start` on its most corroborated shortest path.

    Path score = sum of edge ranks; ties go to the lower entity position, so results are stable.
    Only entities at most `up_to` hops away get a parent when `up_to` is given.
    """
    size = len(index.refs)
    parent = np.full(size, UNREACHED, dtype=np.int64)
    score = np.zeros(size, dtype=np.int64)
    rank = index.rank_hard if hard_only else index.rank_all
    levels = int(dist.max(initial=0))
    for depth in range(1, levels + 1 if up_to is None else min(levels, up_to) + 1):
        slots, sources = _expand(index, np.flatnonzero(dist == depth - 1))
        if hard_only and index.any_soft:
            keep = index.hard[slots]
            slots, sources = slots[keep], sources[keep]
        targets = index.indices[slots]
        on_level = dist[targets] == depth
        slots, sources, targets = slots[on_level], sources[on_level], targets[on_level]
        candidate = score[sources] + rank[slots]
        # Best candidate per target, then the lowest source among those that reach it: two
        # unbuffered scatters instead of sorting every edge of the level (285 ms at a million).
        best = np.full(size, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(best, targets, candidate)
        winning = candidate == best[targets]
        lowest = np.full(size, size, dtype=np.int64)
        np.minimum.at(lowest, targets[winning], sources[winning])
        level = np.flatnonzero(dist == depth)
        parent[level] = lowest[level]
        score[level] = best[level]
    return parent

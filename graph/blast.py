"""Blast radius: everything that breaks (or degrades) when one entity fails, and what survives."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from graph.compiled import UNREACHED, IntArray, best_parents, reverse_levels
from graph.relations import PART_OF, RUNTIME_KINDS, propagates
from graph.snapshot import EdgeFacts, Snapshot

BREAKS = "breaks"
DEGRADES = "degrades"


@dataclass(frozen=True, slots=True)
class Impact:
    """One impacted entity: hops from the failure, the cited path back to it, and who to page."""

    entity: str
    hops: int
    impact: str
    path: tuple[str, ...]  # from the failed entity to this one
    edges: tuple[EdgeFacts, ...]  # each in its true direction: path[i+1] depends on path[i]
    owners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SystemImpact:
    entity: str
    impacted: int
    total: int


@dataclass(frozen=True, eq=False)
class BlastRadius:
    """Reachability is computed eagerly; paths, systems and survivors only when read."""

    snapshot: Snapshot
    failed: str
    max_depth: int | None
    _hard: IntArray
    _all: IntArray

    @cached_property
    def breaks(self) -> tuple[str, ...]:
        return self._refs_where(self._hard > 0)

    @cached_property
    def degrades(self) -> tuple[str, ...]:
        return self._refs_where((self._all > 0) & (self._hard == UNREACHED))

    @property
    def impacted_count(self) -> int:
        return int(np.count_nonzero(self._all > 0))

    @cached_property
    def impacted(self) -> tuple[Impact, ...]:
        """Every impacted entity, nearest first, each with one shortest, most corroborated path."""
        found = self._impacts(self._hard, hard_only=True, label=BREAKS)
        found += self._impacts(np.where(self._hard == UNREACHED, self._all, UNREACHED), hard_only=False, label=DEGRADES)
        return tuple(sorted(found, key=lambda i: (i.hops, i.impact != BREAKS, i.entity)))

    @cached_property
    def survives(self) -> tuple[str, ...]:
        """Components and resources neither impacted nor failed."""
        index = self.snapshot.walk_index
        hit = self._all >= 0
        return tuple(
            ref for i, ref in enumerate(index.refs) if not hit[i] and self.snapshot.entities[ref].kind in RUNTIME_KINDS
        )

    @cached_property
    def systems(self) -> tuple[SystemImpact, ...]:
        """Systems with at least one impacted part: how many of their parts are impacted."""
        impacted = set(self.breaks) | set(self.degrades)
        totals: Counter[str] = Counter()
        hits: Counter[str] = Counter()
        for system, parts in self._system_parts().items():
            totals[system] = len(parts)
            hits[system] = len(parts & impacted)
        return tuple(SystemImpact(s, hits[s], totals[s]) for s in sorted(totals) if hits[s])

    def _system_parts(self) -> dict[str, set[str]]:
        parts: dict[str, set[str]] = {}
        for ref, edges in self.snapshot.in_edges.items():
            if ref.startswith("system:"):
                parts[ref] = {e.src for e in edges if e.rel == PART_OF}
        return parts

    def _refs_where(self, mask: np.ndarray) -> tuple[str, ...]:
        refs = self.snapshot.walk_index.refs
        return tuple(refs[i] for i in np.flatnonzero(mask))

    def _impacts(self, dist: IntArray, *, hard_only: bool, label: str) -> list[Impact]:
        index = self.snapshot.walk_index
        reached = np.flatnonzero(dist > 0)
        if not reached.size:
            return []
        # Parents come from the full walk of the same kind, so a degraded entity's path may
        # pass through entities that break.
        walk = self._hard if hard_only else self._all
        parent = best_parents(index, walk, hard_only=hard_only)
        impacts = []
        for i in reached:
            chain = [int(i)]
            while chain[-1] != index.position[self.failed]:
                chain.append(int(parent[chain[-1]]))
            path = tuple(index.refs[n] for n in reversed(chain))
            edges = tuple(_best_edge(self.snapshot, path[k + 1], path[k], hard_only) for k in range(len(path) - 1))
            ref = index.refs[i]
            impacts.append(Impact(ref, int(dist[i]), label, path, edges, self.snapshot.owners(ref)))
        return impacts


def _best_edge(snapshot: Snapshot, dependent: str, dependency: str, hard_only: bool) -> EdgeFacts:
    candidates = [
        e
        for e in snapshot.out_edges.get(dependent, ())
        if e.dst == dependency and propagates(e.rel) and not (hard_only and e.soft)
    ]
    return max(candidates, key=lambda e: (e.rank, e.rel == "depends_on", e.rel))


def blast_radius(snapshot: Snapshot, failed: str, *, max_depth: int | None = None) -> BlastRadius:
    """Every entity that transitively depends on `failed` over propagating relations.

    An entity reachable only through a soft dependency `degrades`; the rest `break`. Cycles end.
    """
    index = snapshot.walk_index
    start = index.position[failed]
    hard = reverse_levels(index, start, hard_only=True, max_depth=max_depth)
    everything = reverse_levels(index, start, hard_only=False, max_depth=max_depth)
    return BlastRadius(snapshot, failed, max_depth, hard, everything)

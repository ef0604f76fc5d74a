"""Blast radius: everything that breaks (or degrades) when one entity fails, and what survives."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from graph.background import stepping
from graph.coverage import Coverage, coverage
from graph.edges import EdgeFacts
from graph.exposure.redaction import redact_path
from graph.exposure.visibility import EVERYONE, Viewer, can_see, restricted_refs, visible
from graph.facts import CallCount
from graph.observed import dress
from graph.relations import PART_OF, RUNTIME_KINDS, propagates
from graph.snapshot import Snapshot
from graph.walks.compiled import UNREACHED, BoolArray, IntArray, best_parents, reverse_levels, walk_index

BREAKS = "breaks"
DEGRADES = "degrades"
NEAREST = 5  # impacted entities (after the failed one) whose runbook passages an answer may quote
# This module's keys in `Snapshot.derived`: both depend on the catalog alone.
_RUNTIME = f"{__name__}.runtime_mask"
_SYSTEMS = f"{__name__}.system_parts"
_RECENT = f"{__name__}.recent"
RECENT = 8  # blast radii kept per snapshot: during an incident many ask about the same failure
KEPT_NEAREST = 100  # the first entries kept with them (a reply's first screen), not a full text's 2,000


@dataclass(frozen=True, slots=True)
class Walked:
    """One failure's walks (hops over every edge, over hard ones) and the parents its paths were
    built from so far: the same for every viewer, and nothing here refers back to the snapshot."""

    hard: IntArray
    all: IntArray
    parents: dict[bool, tuple[int, IntArray]]
    seen_by_all: dict[object, tuple[Any, ...]]  # what every viewer who sees all is shown alike
    calls: Mapping[str, CallCount]  # the counts the entries in `seen_by_all` were dressed with


class RecentWalks(dict[tuple[str, int | None], Walked]):
    """The last few failures walked on one snapshot; never saved with its image (each holds a few
    arrays of every entity), and empty again after it is loaded."""

    def __reduce__(self) -> tuple[type[RecentWalks], tuple[()]]:
        return RecentWalks, ()


@dataclass(frozen=True, slots=True)
class Impact:
    """One impacted entity: hops from the failure, the cited path back to it, and who to page."""

    entity: str
    hops: int
    impact: str
    path: tuple[str, ...]  # from the failed entity to this one; HIDDEN where the viewer may not look
    edges: tuple[EdgeFacts, ...]  # each in its true direction: path[i+1] depends on path[i]
    owners: tuple[str, ...]
    hidden: int = 0  # entities on the path the viewer may not see


_Path = tuple[tuple[str, ...], tuple[EdgeFacts, ...]]


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
    viewer: Viewer = EVERYONE
    _parents: dict[bool, tuple[int, IntArray]] = field(default_factory=dict, repr=False)  # shared: `Walked`
    _seen_by_all: dict[object, tuple[Any, ...]] = field(default_factory=dict, repr=False)  # shared too

    @cached_property
    def breaks(self) -> tuple[str, ...]:
        return self._refs_where(self._hard > 0)

    @cached_property
    def degrades(self) -> tuple[str, ...]:
        return self._refs_where((self._all > 0) & (self._hard == UNREACHED))

    @property
    def impacted_count(self) -> int:
        return int(np.count_nonzero(self._all > 0))

    @property
    def breaks_count(self) -> int:
        """len(breaks), without listing 100k refs to count them."""
        return int(np.count_nonzero(self._hard > 0))

    @property
    def degrades_count(self) -> int:
        return int(np.count_nonzero((self._all > 0) & (self._hard == UNREACHED)))

    @cached_property
    def coverage(self) -> Coverage:
        """How much the graph could have found: said when it finds nothing."""
        return coverage(self.snapshot)

    @cached_property
    def impacted(self) -> tuple[Impact, ...]:
        """Every impacted entity, nearest first, each with one shortest, most corroborated path."""
        return self.nearest(self.impacted_count)

    def nearest(self, limit: int) -> tuple[Impact, ...]:
        """The first `limit` entries of `impacted`, building only their paths (what a reply shows first)."""
        return tuple(self.iter_nearest(limit))

    def iter_nearest(self, limit: int) -> Iterator[Impact]:
        """`nearest`, one entry at a time: a background writer can pause between entries."""
        if not (self._sees_all and limit <= KEPT_NEAREST):
            yield from self._iter_nearest(limit)
            return
        if (listed := self._seen_by_all.get(("nearest", limit))) is not None:
            yield from listed
            return
        found: list[Impact] = []
        for impact in self._iter_nearest(limit):
            found.append(impact)
            yield impact
        self._seen_by_all[("nearest", limit)] = tuple(found)  # listed to the end: the next answer shows the same

    def _iter_nearest(self, limit: int) -> Iterator[Impact]:
        # Entities this viewer may not see are skipped, so rank enough to fill `limit` without them.
        positions, hops, degraded = self._ranked(limit + len(restricted_refs(self.snapshot)))
        refs = walk_index(self.snapshot).refs
        memo: dict[tuple[bool, int], _Path] = {}
        sees_all = self._sees_all
        found = 0
        for position, hop, soft in zip(positions.tolist(), hops.tolist(), degraded.tolist(), strict=True):
            if found == limit:
                break
            impact = self._impact(refs[position], position, hop, bool(soft), memo, sees_all)
            if impact is not None:
                found += 1
                yield impact

    def impact_on(self, ref: str) -> Impact | None:
        """How the failure reaches `ref` (its one path, built alone), or None: not reached, the
        failed entity itself, or hidden from the viewer."""
        return None if ref == self.failed else self.impact_of(ref)

    def impact_of(self, ref: str) -> Impact | None:
        """`ref` as `impacted` lists it (its hops, path and owners), or None: not impacted, or hidden."""
        return self.impacts_of((ref,)).get(ref)

    def impacts_of(self, refs: Iterable[str]) -> dict[str, Impact]:
        """Each of `refs` that is impacted and visible, as `impacted` lists it (paths sharing their prefixes)."""
        position, sees_all = walk_index(self.snapshot).position, self._sees_all
        memo: dict[tuple[bool, int], _Path] = {}
        found = {}
        for ref in refs:
            at = position.get(ref)
            if at is None or self._all[at] <= 0:
                continue
            hard = int(self._hard[at])
            soft = hard <= 0
            impact = self._impact(ref, at, int(self._all[at]) if soft else hard, soft, memo, sees_all)
            if impact is not None:
                found[ref] = impact
        return found

    @property
    def _sees_all(self) -> bool:
        # Redacting for a viewer who sees everything changes nothing, and took a third of the time
        # to list 100k impacted entities (bench dense-100k).
        return self.viewer.everything or not restricted_refs(self.snapshot)

    def _impact(
        self, ref: str, position: int, hop: int, soft: bool, memo: dict[tuple[bool, int], _Path], sees_all: bool
    ) -> Impact | None:
        if not (sees_all or can_see(self.snapshot, ref, self.viewer)):
            return None
        path, edges = self._path(position, hop, not soft, memo)
        owners = self.snapshot.owners(ref)
        hidden = 0
        if not sees_all:
            path, edges, hidden = redact_path(self.snapshot, path, edges, self.viewer)
            owners = visible(self.snapshot, owners, self.viewer)
        elif calls := self.snapshot.calls:  # redaction dresses observed citations with their calls; here not
            edges = tuple(dress(e, calls) for e in edges)
        return Impact(ref, hop, DEGRADES if soft else BREAKS, path, edges, owners, hidden)

    def subjects(self, *, nearest: int = NEAREST) -> tuple[str, ...]:
        """The entities this answer is about, most important first (whose runbook passages to
        quote): the failed one, then the nearest impacted ones this viewer may see."""
        return (self.failed, *(impact.entity for impact in self.nearest(nearest)))

    @property
    def failed_owners(self) -> tuple[str, ...]:
        """The failed entity's owners this viewer may see."""
        return visible(self.snapshot, self.snapshot.owners(self.failed), self.viewer)

    @property
    def hidden_count(self) -> int:
        """Impacted entities the viewer may not see: counted, never named."""
        position = walk_index(self.snapshot).position
        return sum(
            1
            for ref in restricted_refs(self.snapshot)
            if self._all[position[ref]] > 0 and not can_see(self.snapshot, ref, self.viewer)
        )

    @cached_property
    def survives(self) -> tuple[str, ...]:
        """Components and resources neither impacted (at any depth) nor failed."""
        return self.first_survivors(self.survivors_count)

    @property
    def survivors_count(self) -> int:
        """len(survives), without naming the 90k survivors of a small failure to count them."""
        return int(self._survivors.size)

    def first_survivors(self, limit: int) -> tuple[str, ...]:
        """The first `limit` of `survives` (what a reply names)."""
        refs = walk_index(self.snapshot).refs
        return tuple(refs[i] for i in self._survivors[: max(limit, 0)].tolist())

    @cached_property
    def _survivors(self) -> IntArray:
        """Walk-index positions of `survives`, in ref order."""
        index = walk_index(self.snapshot)
        if self.max_depth is None:
            hit = self._all >= 0
        else:
            # Beyond the depth limit is not "survives": only what no walk reaches at all survives.
            start = index.position[self.failed]
            hit = reverse_levels(index, start, hard_only=False, max_depth=None) >= 0
        # Array work per query; what depends on the catalog alone is computed once per snapshot.
        runtime = runtime_mask(self.snapshot)
        keep = np.flatnonzero(~hit & runtime)
        if self._sees_all:
            return keep
        # Only restricted entities can be hidden: look at those alone, not at every survivor.
        restricted = np.fromiter((index.position[ref] for ref in restricted_refs(self.snapshot)), dtype=np.int64)
        candidates = restricted[~hit[restricted] & runtime[restricted]].tolist()
        hidden = [i for i in candidates if not can_see(self.snapshot, index.refs[i], self.viewer)]
        return np.setdiff1d(keep, np.array(hidden, dtype=np.int64), assume_unique=True)

    @cached_property
    def systems(self) -> tuple[SystemImpact, ...]:
        """Systems with at least one impacted part: how many of their parts are impacted."""
        sees_all = self._sees_all  # a can_see per system was half of this at a hub (bench layered-100k)
        if sees_all and (kept := self._seen_by_all.get("systems")) is not None:
            return kept
        parts = system_parts(self.snapshot)
        if not parts.refs:
            return ()
        # One array pass for every system at once: a loop over thousands of systems cost 10 ms a query.
        hits = np.add.reduceat((self._all > 0)[parts.flat], parts.starts, dtype=np.int64)
        hit = np.flatnonzero(hits)
        found = zip(hit.tolist(), hits[hit].tolist(), parts.sizes[hit].tolist(), strict=True)
        systems = tuple(
            SystemImpact(parts.refs[i], impacted, total)
            for i, impacted, total in found
            if sees_all or can_see(self.snapshot, parts.refs[i], self.viewer)
        )
        if sees_all:
            self._seen_by_all["systems"] = systems  # 2,000 systems at a 100k hub, for every answer after
        return systems

    def _refs_where(self, mask: np.ndarray) -> tuple[str, ...]:
        refs = walk_index(self.snapshot).refs
        return tuple(refs[i] for i in np.flatnonzero(mask))

    def _ranked(self, limit: int) -> tuple[IntArray, IntArray, IntArray]:
        """(positions, hops, 1 where degraded) of the first `limit` impacted entities, in display order."""
        # Nearest first, breaks before degrades, then position order (ref order): one small key per
        # entity, 2 x hops (+1 when degraded), and the cut found by counting the keys, not by
        # partitioning them (a third of showing the first 20 at a 100k hub, bench dense-100k).
        hard, every = self._hard, self._all
        unreached = 2 * max(int(hard.max(initial=0)), int(every.max(initial=0))) + 2  # a hard path may be longer
        key = np.where(hard > 0, hard * 2, unreached)
        if hard is not every:
            np.putmask(key, (hard == UNREACHED) & (every > 0), every * 2 + 1)
        reached = np.cumsum(np.bincount(key, minlength=unreached + 1)[:unreached])
        if limit <= 0 or not reached.size or not reached[-1]:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, empty
        cut = min(int(np.searchsorted(reached, limit)), unreached - 1)
        positions = np.flatnonzero(key <= cut)
        key = key[positions]
        order = np.argsort(key, kind="stable")[:limit]
        positions, key = positions[order], key[order]
        return positions, key // 2, key % 2

    def _path(self, position: int, hops: int, hard_only: bool, memo: dict[tuple[bool, int], _Path]) -> _Path:
        """Refs from the failed entity to `position`, and the edge of each hop.

        Parents come from the full walk of the same kind, so a degraded entity's path may pass
        through entities that break. Paths share prefixes, so each extends its parent's.
        """
        parent = self._parents_up_to(hops, hard_only=hard_only)
        chain, node = [], position
        while hops > 0 and (hard_only, node) not in memo:
            chain.append(node)
            node, hops = int(parent[node]), hops - 1
        refs = walk_index(self.snapshot).refs
        path, edges = memo.get((hard_only, node), ((refs[node],), ()))
        for child in reversed(chain):
            edge = _best_edge(self.snapshot, refs[child], path[-1], hard_only)
            path, edges = memo[(hard_only, child)] = (*path, refs[child]), (*edges, edge)
        return path, edges

    def _parents_up_to(self, hops: int, *, hard_only: bool) -> IntArray:
        done, parent = self._parents.get(hard_only, (0, None))
        if parent is None or done < hops:
            walk = self._hard if hard_only else self._all
            # Parents of the nearest levels only, until farther paths are asked for: a reply that
            # shows the first 20 paths need not rank every edge of a 100k-entity graph.
            done = max(hops, 2 * done)
            parent = best_parents(walk_index(self.snapshot), walk, hard_only=hard_only, up_to=done)
            self._parents[hard_only] = (done, parent)
        return parent


def runtime_mask(snapshot: Snapshot) -> BoolArray:
    """Components and resources, in walk-index order (the entities that can fail or survive)."""
    mask: BoolArray | None = snapshot.derived.get(_RUNTIME)
    if mask is None:
        kinds = [snapshot.entities[ref].kind for ref in walk_index(snapshot).refs]
        mask = snapshot.derived[_RUNTIME] = np.fromiter(
            (k in RUNTIME_KINDS for k in kinds), dtype=bool, count=len(kinds)
        )
    return mask


@dataclass(frozen=True, slots=True)
class SystemParts:
    """Every system with parts, sorted by ref; system i's parts are flat[starts[i] : starts[i] + sizes[i]]."""

    refs: tuple[str, ...]
    flat: IntArray
    starts: IntArray
    sizes: IntArray


def system_parts(snapshot: Snapshot) -> SystemParts:
    """Each system's parts, as walk-index positions, computed once per built graph."""
    parts: SystemParts | None = snapshot.derived.get(_SYSTEMS)
    if parts is None:
        position = walk_index(snapshot).position
        systems = sorted(ref for ref in snapshot.in_edges if ref.startswith("system:"))
        found = {
            ref: sorted(position[e.src] for e in snapshot.in_edges[ref] if e.rel == PART_OF)
            for ref in stepping(systems)
        }
        found = {ref: p for ref, p in found.items() if p}
        sizes = np.fromiter((len(p) for p in found.values()), dtype=np.int64, count=len(found))
        flat = np.fromiter((i for p in found.values() for i in p), dtype=np.int64, count=int(sizes.sum()))
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64) if found else sizes
        parts = snapshot.derived[_SYSTEMS] = SystemParts(tuple(found), flat, starts, sizes)
    return parts


def _best_edge(snapshot: Snapshot, dependent: str, dependency: str, hard_only: bool) -> EdgeFacts:
    candidates = [
        e
        for e in snapshot.out_edges.get(dependent, ())
        if e.dst == dependency and propagates(e.rel) and not (hard_only and e.soft)
    ]
    return max(candidates, key=lambda e: (e.rank, e.rel == "depends_on", e.rel))


def blast_radius(
    snapshot: Snapshot, failed: str, *, max_depth: int | None = None, viewer: Viewer = EVERYONE
) -> BlastRadius:
    """Every entity that transitively depends on `failed` over propagating relations.

    An entity reachable only through a soft dependency `degrades`; the rest `break`. Cycles end.
    A failure walked lately on this snapshot is not walked again (`recent_walks`): its hops and
    paths are the same for every viewer, and what this viewer may see is applied as they are listed.
    """
    recent = recent_walks(snapshot)
    walked = recent.get((failed, max_depth))
    if walked is None:
        if len(recent) >= RECENT:
            recent.clear()  # not an LRU: one statement, safe beside other threads' answers
        walked = recent[(failed, max_depth)] = _walk(snapshot, failed, max_depth)
    elif walked.calls is not snapshot.calls:  # a fresher snapshot: same walk, entries dressed anew
        walked = recent[(failed, max_depth)] = replace(walked, seen_by_all={}, calls=snapshot.calls)
    return BlastRadius(snapshot, failed, max_depth, walked.hard, walked.all, viewer, walked.parents, walked.seen_by_all)


def recent_walks(snapshot: Snapshot) -> RecentWalks:
    """The snapshot's last few walks, kept while it serves (and while fresher marks share its indexes)."""
    found: RecentWalks | None = snapshot.derived.get(_RECENT)
    if found is None:
        found = snapshot.derived.setdefault(_RECENT, RecentWalks())
    return found


def _walk(snapshot: Snapshot, failed: str, max_depth: int | None) -> Walked:
    index = walk_index(snapshot)
    start = index.position[failed]
    everything = reverse_levels(index, start, hard_only=False, max_depth=max_depth)
    # Without soft pairs the hard-only walk is the same walk: skip it (half of a query's time).
    hard = reverse_levels(index, start, hard_only=True, max_depth=max_depth) if index.any_soft else everything
    for hops in (hard, everything):
        hops.flags.writeable = False  # shared by every answer about this failure
    return Walked(hard, everything, {}, {}, snapshot.calls)

"""The shortest cited chain between two entities, each edge followed in its own direction."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from graph.edges import EdgeFacts
from graph.relations import DEPENDS_ON
from graph.snapshot import Snapshot
from graph.visibility import EVERYONE, Viewer, redact_path
from graph.walk import layered_walk, path_to


@dataclass(frozen=True, slots=True)
class CitedPath:
    src: str
    dst: str
    path: tuple[str, ...]  # empty when the two are not connected in either direction
    edges: tuple[EdgeFacts, ...]
    hidden: int = 0


def _forward(snapshot: Snapshot, ref: str) -> Iterable[tuple[str, EdgeFacts]]:
    return ((e.dst, e) for e in snapshot.out_edges.get(ref, ()))


def _cost(edge: EdgeFacts) -> tuple[int, int]:
    return (0 if edge.rel == DEPENDS_ON else 1, -edge.rank)


def find_path(snapshot: Snapshot, src: str, dst: str, *, viewer: Viewer = EVERYONE) -> CitedPath:
    """From `src` to `dst` if possible, else from `dst` to `src`; depends_on wins equal lengths."""
    for a, b in ((src, dst), (dst, src)):
        walk = layered_walk(a, lambda r: _forward(snapshot, r), cost=_cost)
        if b in walk:
            path, edges, hidden = redact_path(snapshot, *path_to(walk, b), viewer)
            return CitedPath(src, dst, path, edges, hidden)
    return CitedPath(src, dst, (), ())

"""The shortest cited chain between two entities, each edge followed in its own direction."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from graph.edges import EdgeFacts
from graph.exposure.redaction import redact_path
from graph.exposure.visibility import EVERYONE, Viewer, can_see
from graph.relations import DEPENDS_ON
from graph.snapshot import Snapshot
from graph.walks.walk import layered_walk, path_to


@dataclass(frozen=True, slots=True)
class CitedPath:
    src: str
    dst: str
    path: tuple[str, ...]  # from src to dst; empty when the two are not connected in either direction
    edges: tuple[EdgeFacts, ...]  # edges[i] joins path[i] and path[i+1], in its own direction either way
    hidden: int = 0


def _forward(snapshot: Snapshot, ref: str, viewer: Viewer) -> Iterable[tuple[str, EdgeFacts]]:
    edges = snapshot.out_edges.get(ref, ())
    if viewer.everything:
        return ((e.dst, e) for e in edges)
    return ((e.dst, e) for e in edges if can_see(snapshot, e.dst, viewer))


def _cost(edge: EdgeFacts) -> tuple[int, int]:
    return (0 if edge.rel == DEPENDS_ON else 1, -edge.rank)


def find_path(snapshot: Snapshot, src: str, dst: str, *, viewer: Viewer = EVERYONE) -> CitedPath:
    """The chain along edges from `src` to `dst` if there is one, else along edges from `dst` to
    `src`; either way listed from `src` to `dst` (scripts read `from` first). depends_on wins
    equal lengths. A viewer's chain runs only through entities they may see: one that exists only
    through a hidden entity is, for them, no chain at all (saying it exists would tell them the
    hidden entity does)."""
    for a, b in ((src, dst), (dst, src)):
        walk = layered_walk(a, lambda r: _forward(snapshot, r, viewer), cost=_cost)
        if b in walk:
            path, edges, hidden = redact_path(snapshot, *path_to(walk, b), viewer)
            if a != src:
                path, edges = path[::-1], edges[::-1]
            return CitedPath(src, dst, path, edges, hidden)
    return CitedPath(src, dst, (), ())


def chain_text(path: CitedPath, name: Callable[[str], str]) -> str:
    """`frontend -depends_on-> consul`, or from the other end `consul <-depends_on- frontend`: the
    entities from `src` to `dst`, each edge arrowed in its own direction."""
    if len(path.edges) != len(path.path) - 1:  # hidden entities took their edges with them
        return " - ".join(map(name, path.path))
    parts = [name(path.path[0])]
    for here, edge, there in zip(path.path, path.edges, path.path[1:], strict=False):
        parts.append(f"-{edge.rel}->" if edge.src == here else f"<-{edge.rel}-")
        parts.append(name(there))
    return " ".join(parts)

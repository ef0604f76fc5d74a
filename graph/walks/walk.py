"""Breadth-first walks that keep, for each entity, the best of its shortest paths."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from graph.edges import EdgeFacts

Step = Callable[[str], Iterable[tuple[str, EdgeFacts]]]
Cost = Callable[[EdgeFacts], tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class Hop:
    hops: int
    parent: str | None
    edge: EdgeFacts | None
    cost: tuple[int, ...]


def layered_walk(start: str, step: Step, *, cost: Cost, max_depth: int | None = None) -> dict[str, Hop]:
    """Shortest paths in hops from `start`; among equally short ones the lowest summed `cost`.

    Cycles end because an entity is settled the first level it is reached.
    """
    settled = {start: Hop(0, None, None, ())}
    frontier = [start]
    depth = 0
    while frontier and (max_depth is None or depth < max_depth):
        depth += 1
        level: dict[str, Hop] = {}
        for node in frontier:
            base = settled[node].cost
            for neighbour, edge in step(node):
                if neighbour in settled:
                    continue
                candidate = _add(base, cost(edge))
                best = level.get(neighbour)
                if best is None or (candidate, node) < (best.cost, best.parent or ""):
                    level[neighbour] = Hop(depth, node, edge, candidate)
        settled.update(level)
        frontier = sorted(level)
    return settled


def _add(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return b if not a else tuple(x + y for x, y in zip(a, b, strict=True))


def path_to(walk: dict[str, Hop], target: str) -> tuple[tuple[str, ...], tuple[EdgeFacts, ...]]:
    """The entities from the walk's start to `target`, and the edge used for each hop."""
    nodes, edges = [target], []
    hop = walk[target]
    while hop.parent is not None and hop.edge is not None:
        nodes.append(hop.parent)
        edges.append(hop.edge)
        hop = walk[hop.parent]
    return tuple(reversed(nodes)), tuple(reversed(edges))

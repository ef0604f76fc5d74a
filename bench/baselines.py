"""The same blast radius computed the ways we compare ourselves with.

- the seed article's walk (step 08 of /work/shared/seeds/000_*.txt): a reverse adjacency
  dict-of-lists and a breadth-first search that copies the whole path for every node it reaches;
- `networkx.ancestors` on a DiGraph of the failure-propagating edges;
- `scipy.sparse.csgraph.breadth_first_order` with predecessors, on the reverse CSR our walk index
  already holds (the floor: one C loop over the arrays).
Each is given its structure ready-made; only the walk is timed.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from graph.relations import propagates
from graph.snapshot import Snapshot
from graph.walks.compiled import walk_index


@dataclass(frozen=True, slots=True)
class Structures:
    reverse: dict[str, list[str]]  # dependency -> dependents, one entry per propagating edge
    digraph: Any  # networkx.DiGraph, dependent -> dependency
    csr: Any  # scipy CSR matrix, dependency -> dependents
    refs: tuple[str, ...]
    position: dict[str, int]


def prepare(snapshot: Snapshot) -> Structures:
    """Every baseline's structure, built from the snapshot's propagating edges."""
    pairs = [(e.src, e.dst) for edges in snapshot.out_edges.values() for e in edges if propagates(e.rel)]
    reverse: dict[str, list[str]] = defaultdict(list)
    for dependent, dependency in pairs:
        reverse[dependency].append(dependent)
    digraph = nx.DiGraph()
    digraph.add_nodes_from(snapshot.entities)
    digraph.add_edges_from(pairs)
    index = walk_index(snapshot)
    size = len(index.refs)
    csr = csr_matrix((np.ones(index.indices.size, dtype=np.int8), index.indices, index.indptr), shape=(size, size))
    return Structures(dict(reverse), digraph, csr, index.refs, dict(index.position))


def seed_impacted(reverse: dict[str, list[str]], failed: str) -> list[tuple[str, list[str]]]:
    """The seed article's `impacted_by`, over refs instead of names."""
    out, seen = [], {failed}
    queue = deque([(failed, [failed])])
    while queue:
        node, path = queue.popleft()
        for dependent in reverse.get(node, []):
            if dependent in seen:
                continue
            seen.add(dependent)
            new_path = path + [dependent]
            out.append((dependent, new_path))
            queue.append((dependent, new_path))
    return out


def networkx_impacted(digraph: Any, failed: str) -> set[str]:
    return set(nx.ancestors(digraph, failed))


def scipy_impacted(csr: Any, start: int) -> tuple[Any, Any]:
    """(reached positions in breadth-first order, predecessor of each)."""
    order, predecessors = breadth_first_order(csr, start, directed=True, return_predecessors=True)
    return order, predecessors


def scipy_refs(structures: Structures, order: Any) -> set[str]:
    return {structures.refs[i] for i in order[1:]}

"""The snapshot as a networkx graph, for exploring it with networkx's algorithms (the hot walks use
`graph.walks.compiled`'s index instead)."""

from __future__ import annotations

from typing import Any

from graph.snapshot import Snapshot

_VIEW = f"{__name__}.view"  # this module's key in `Snapshot.derived`


def networkx_view(snapshot: Snapshot) -> Any:
    """A frozen networkx MultiDiGraph (key = relation, attribute `facts`): built on first use, once per graph."""
    view = snapshot.derived.get(_VIEW)
    if view is None:
        import networkx as nx  # loaded only by those who ask for the view

        g = nx.MultiDiGraph()
        for ref, entity in snapshot.entities.items():
            g.add_node(ref, entity=entity)
        g.add_edges_from((e.src, e.dst, e.rel, {"facts": e}) for edges in snapshot.out_edges.values() for e in edges)
        view = snapshot.derived[_VIEW] = nx.freeze(g)
    return view

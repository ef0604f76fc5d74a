"""Edges as the one-line receipts people read: `a -rel-> b [sources] xN`."""

from __future__ import annotations

from graph.edges import EdgeFacts
from graph.naming.refs import short_name


def cite_edge(edge: EdgeFacts) -> str:
    """`auth-service -depends_on-> token-cache [docs/auth.md:3, catalog/auth.yaml#1] x2`; an edge
    traces saw says so: `(observed)`, or `(declared + observed)` where both agree."""
    via = f" (via {short_name(edge.via[0])})" if edge.via else ""
    soft = " (soft)" if edge.soft else ""
    sources = ", ".join(edge.sources)
    seen = f" ({provenance(edge)})" if edge.observed else ""
    head = f"{short_name(edge.src)} -{edge.rel}-> {short_name(edge.dst)}{via}{soft}{seen}"
    return f"{head} [{sources}] x{edge.weight}"


def provenance(edge: EdgeFacts) -> str:
    """Where a hop comes from: `declared`, `observed`, or `declared + observed`."""
    if edge.observed and edge.declared:
        return "declared + observed"
    return "observed" if edge.observed else "declared"

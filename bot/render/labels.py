"""The graph's cited lines of an answer, labelled with the ids a model's phrasing cites them by."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.model.ports import Phrasing
from graph.citations import cite_edge
from graph.edges import EdgeFacts
from graph.questions.ask import Answer


def labelled_lines(answer: Answer, phrasing: Phrasing | None) -> list[str]:
    """The answer's cited edges; with a phrasing, each prefixed by the id the model saw it under."""
    return labelled(answer.edges, phrasing)


def labelled(
    edges: Sequence[EdgeFacts], phrasing: Phrasing | None, cite: Callable[[EdgeFacts], str] = cite_edge
) -> list[str]:
    """`cite` of each edge, prefixed by the id the model saw it under when a phrasing cites them."""
    if phrasing is None:
        return [cite(edge) for edge in edges]
    ids = phrasing.context.edge_ids()
    labels = [ids.get((edge.src, edge.rel, edge.dst)) for edge in edges]
    return [f"[{label}] {cite(edge)}" if label else cite(edge) for label, edge in zip(labels, edges, strict=True)]

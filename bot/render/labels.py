"""The graph's cited lines of an answer, labelled with the ids a model's phrasing cites them by."""

from __future__ import annotations

from bot.model.ports import Phrasing
from graph.questions.ask import Answer


def labelled_lines(answer: Answer, phrasing: Phrasing | None) -> list[str]:
    """The answer's cited edges; with a phrasing, each prefixed by the id the model saw it under."""
    if phrasing is None:
        return list(answer.cited_lines)
    ids = phrasing.context.edge_ids()
    labels = [ids.get((edge.src, edge.rel, edge.dst)) for edge in answer.edges]
    return [f"[{label}] {line}" if label else line for label, line in zip(labels, answer.cited_lines, strict=True)]

"""Ports for the optional language model, owned by the bot that uses them.

The graph computes every answer. A model may only read a free-text question into names, an intent and
a window (`QuestionReader`), and phrase what the graph found from the numbered facts it is given
(`Explainer`). Adapters raise `ModelCallError` for anything that is not a reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from graph.questions.model_context import ModelContext

# Outcomes of one call, as counted in oncall_graph_model_calls_total{outcome}.
OK, REJECTED, TIMEOUT = "ok", "rejected", "timeout"
RATE_LIMITED, OVERLOADED, ERROR = "rate_limited", "overloaded", "error"
MODEL_VENDOR = "Claude"


class ModelCallError(Exception):
    """No usable reply: `outcome` is TIMEOUT, RATE_LIMITED, OVERLOADED or ERROR."""

    def __init__(self, outcome: str, detail: str, seconds: float = 0.0) -> None:
        super().__init__(f"{outcome}: {detail}")
        self.outcome = outcome
        self.detail = detail
        self.seconds = seconds


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One reply: its text blocks joined, any tool call, why it stopped, and what it cost."""

    model: str
    text: str
    stop_reason: str
    input_tokens: int
    output_tokens: int
    seconds: float
    tool_calls: tuple[tuple[str, Any], ...] = field(default=())  # (tool name, input) as received


class Explainer(Protocol):
    model: str
    max_context_tokens: int

    def explain(self, question: str, task: str, context: ModelContext) -> ModelReply: ...


class QuestionReader(Protocol):
    model: str

    def read(self, question: str) -> ModelReply: ...


@dataclass(frozen=True, slots=True)
class Phrasing:
    """A reply that passed the checks: shown above the graph's own cited lines, marked as the model's."""

    text: str
    model: str
    cited: tuple[str, ...]
    context: ModelContext

    @property
    def marker(self) -> str:
        count = len(self.cited)
        facts = "fact" if count == 1 else "facts"
        return f"Phrased by {MODEL_VENDOR} ({self.model}) from {count} cited {facts}; the paths below are the graph's."

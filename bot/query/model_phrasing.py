"""A question or an alert, answered by the graph and, when a model is configured, read and phrased by it.

The graph computes every answer. The model calls are network waits, not CPU work, so they run
outside `cpu` (the bot's work slots); the graph's parts run inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.model.phrasing import Phrased, phrase, record_fallback
from bot.model.ports import OVERLOADED, RATE_LIMITED, TIMEOUT, Explainer, Phrasing, QuestionReader
from bot.model.reader import read_with_model, resolve_read
from bot.telemetry.metrics import Metrics
from graph.edges import EdgeFacts
from graph.exposure.passages import prose, top_passages
from graph.exposure.visibility import EVERYONE, Viewer
from graph.naming.refs import short_name
from graph.questions.ask import (
    AFFECTED,
    DEPENDENCIES,
    IMPACT,
    OWNERSHIP,
    PATH,
    Answer,
    answer_intent,
    ask,
    read_window,
)
from graph.questions.model_context import build_context
from graph.questions.wording import bounded_window
from graph.snapshot import Snapshot
from graph.walks.blast import BlastRadius
from graph.walks.suspects import Suspects

# The reader's call failing like this means the API is unwell: the explainer is not called as well,
# so an answer waits at most one timeout, not two.
UNAVAILABLE = frozenset({TIMEOUT, RATE_LIMITED, OVERLOADED})
PASSAGES = 3  # runbook passages offered to the model; the budget drops them before any entity fact
ALERT_IMPACTS = 200  # impacted entities whose paths an alert's context may hold (the budget cuts further)


@dataclass(frozen=True)
class ModelPorts:
    """The optional model, as the bot and the command line are given it."""

    explainer: Explainer | None = None
    reader: QuestionReader | None = None
    metrics: Metrics = field(default_factory=Metrics)


@dataclass(frozen=True, slots=True)
class Asked:
    answer: Answer
    phrasing: Phrasing | None = None
    fallback: str = ""  # why the model's phrasing is not shown, when one was asked for


def _passages(snapshot: Snapshot, entities: Sequence[str], viewer: Viewer) -> Sequence[tuple[str, str]]:
    """Runbook passages about the answer's entities, as (locator, prose), never one naming a hidden entity."""
    return [(p.locator, prose(p.text)) for p in top_passages(snapshot, entities, PASSAGES, viewer=viewer)]


def ask_question(
    snapshot: Snapshot,
    question: str,
    *,
    now: datetime,
    model: ModelPorts | None = None,
    viewer: Viewer = EVERYONE,
    purpose: str = "ask",
    cpu: AbstractContextManager[object] | None = None,
) -> Asked:
    """The graph's answer to a free-text question, phrased by the model when it passes the checks."""
    cpu = cpu or nullcontext()
    read, failed = read_with_model(model.reader, model.metrics, question) if model and model.reader else (None, "")
    with cpu:
        if read is None:
            answer, window = ask(snapshot, question, now=now, viewer=viewer), read_window(question, now)
        else:
            found = resolve_read(snapshot, question, read, viewer)
            window = bounded_window(question, found.window or read_window(question, now))[0]
            answer = answer_intent(
                snapshot, question, found.mentions, found.intent, now=now, window=window, viewer=viewer,
                names=found.names, kinds=found.kinds,
            )  # fmt: skip
        explainer = model.explainer if model else None
        if explainer is None or not answer.edges:
            return Asked(answer)
        if failed in UNAVAILABLE:
            assert model is not None
            record_fallback(model.metrics, purpose, failed, "the reader's call just failed; not calling again")
            return Asked(answer, None, failed)
        focus = answer_focus(answer)
        context = build_context(
            snapshot, focus=focus, edges=answer.edges, now=now, window=window,
            passages=_passages(snapshot, focus, viewer), max_tokens=explainer.max_context_tokens, viewer=viewer,
        )  # fmt: skip
    assert model is not None
    phrased = phrase(
        explainer, model.metrics, purpose=purpose, question=question, task=_task(answer, window), context=context,
        index=snapshot.aliases,
    )  # fmt: skip
    return Asked(answer, phrased.phrasing, phrased.fallback)


def answer_focus(answer: Answer) -> tuple[str, ...]:
    """The entities the graph's answer is about; others the question names are not facts given to the model."""
    if answer.intent == AFFECTED:  # the one asked about, then the one that fails
        return answer.asks[0].entities
    return answer.entities[: 2 if answer.intent == PATH else 1]


def _task(answer: Answer, window: timedelta) -> str:
    names = [short_name(e) for e in answer_focus(answer)]
    first = names[0] if names else "the entity"
    hours = f"{window.total_seconds() / 3600:g}"
    return {
        IMPACT: f"Blast radius: what breaks or degrades if {first} fails, and who owns it.",
        DEPENDENCIES: f"What {first} depends on, who owns each, and which were deployed in the last {hours} hours"
        " (suspects, never causes).",
        OWNERSHIP: f"Who owns {first} (or what it depends on).",
        PATH: f"How {' and '.join(names[:2])} are connected.",
        AFFECTED: f"Whether {first} breaks if {names[-1]} goes down: yes with the path from {first} to it, or no"
        " and why (no path, or only soft dependencies: it degrades).",
    }.get(answer.intent, f"About {first}.")


def explain_alert(
    model: ModelPorts,
    snapshot: Snapshot,
    found: Suspects,
    impact: BlastRadius,
    *,
    title: str,
    viewer: Viewer,
    cpu: AbstractContextManager[object] | None = None,
) -> Phrased:
    """The model's summary of an alert reply, from the alerting entity's dependencies, deploys and blast radius."""
    explainer = model.explainer
    if explainer is None:
        return Phrased(None)
    with cpu or nullcontext():
        edges: list[EdgeFacts] = [e for dep in found.dependencies for e in dep.edges]
        edges += [e for hit in impact.nearest(ALERT_IMPACTS) for e in hit.edges]
        context = build_context(
            snapshot, focus=(found.entity,), edges=edges, now=found.now, window=found.now - found.since,
            passages=_passages(snapshot, found.subjects(), viewer), max_tokens=explainer.max_context_tokens,
            viewer=viewer,
        )  # fmt: skip
    name = short_name(found.entity)
    hours = f"{(found.now - found.since).total_seconds() / 3600:g}"
    question = f"An alert fired on {name}: {title}".strip().rstrip(":")
    task = (
        f"Summarize for the on-call engineer: what {name} depends on and who owns it, which dependencies were"
        f" deployed in the last {hours} hours (suspects, never causes), and what breaks if {name} is down."
    )
    return phrase(
        explainer, model.metrics, purpose="alert", question=question, task=task, context=context,
        index=snapshot.aliases,
    )  # fmt: skip

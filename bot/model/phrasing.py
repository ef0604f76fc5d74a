"""Asking the explainer to phrase an answer, checking the reply, and counting every call.

A reply is shown only when it passes `graph.questions.grounding.check_reply`; on any failure (timeout, 429,
529, an API error, an empty, cut or ungrounded reply) the caller posts the graph's own answer and
the reason is logged and counted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.model.ports import OK, REJECTED, Explainer, ModelCallError, ModelReply, Phrasing
from bot.telemetry.metrics import Metrics
from graph.naming.names import AliasIndex
from graph.questions.grounding import check_reply
from graph.questions.model_context import ModelContext

log = logging.getLogger(__name__)
# Stop reasons that mean the text is not a whole answer.
_UNFINISHED = {"max_tokens": "truncated", "refusal": "refusal"}


@dataclass(frozen=True, slots=True)
class Phrased:
    phrasing: Phrasing | None
    fallback: str = ""  # why the graph's own answer is shown instead; "" when phrased


def record_call(metrics: Metrics, purpose: str, outcome: str, seconds: float, reply: ModelReply | None = None) -> None:
    metrics.model_calls.labels(purpose, outcome).inc()
    metrics.model_seconds.labels(purpose).observe(seconds)
    tokens_in = reply.input_tokens if reply else 0
    tokens_out = reply.output_tokens if reply else 0
    metrics.model_tokens.labels(purpose, "input").inc(tokens_in)
    metrics.model_tokens.labels(purpose, "output").inc(tokens_out)
    model = reply.model if reply else "-"
    log.info(
        "model call purpose=%s model=%s outcome=%s input_tokens=%d output_tokens=%d seconds=%.3f",
        purpose, model, outcome, tokens_in, tokens_out, seconds,
    )  # fmt: skip


def record_fallback(metrics: Metrics, purpose: str, reason: str, detail: str) -> None:
    metrics.model_fallbacks.labels(reason).inc()
    log.warning("model %s not used (%s: %s); the graph's own answer is used", purpose, reason, detail)


def phrase(
    explainer: Explainer,
    metrics: Metrics,
    *,
    purpose: str,
    question: str,
    task: str,
    context: ModelContext,
    index: AliasIndex,
) -> Phrased:
    """The explainer's reply when it is grounded in `context`; otherwise the reason it is not used."""
    try:
        reply = explainer.explain(question, task, context)
    except ModelCallError as exc:
        record_call(metrics, purpose, exc.outcome, exc.seconds)
        record_fallback(metrics, purpose, exc.outcome, exc.detail)
        return Phrased(None, exc.outcome)
    unfinished = _UNFINISHED.get(reply.stop_reason)
    verdict = check_reply(reply.text, context, index)
    if unfinished or not verdict.ok:
        record_call(metrics, purpose, REJECTED, reply.seconds, reply)
        reason = unfinished or verdict.reason
        record_fallback(metrics, purpose, reason, f"stop_reason {reply.stop_reason}" if unfinished else verdict.detail)
        return Phrased(None, reason)
    record_call(metrics, purpose, OK, reply.seconds, reply)
    return Phrased(Phrasing(reply.text, reply.model or explainer.model, verdict.cited, context))

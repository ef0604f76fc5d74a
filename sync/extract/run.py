"""`oncall-graph extract`: documents -> chunks -> an estimate -> (once confirmed) one model call per
chunk -> checked candidates held for review. Nothing extracted reaches an answer before an admin
approves it (`sync.store.reviews`).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import anthropic

from graph.facts import Problem
from sync.extract.chunks import Chunk, read_chunks
from sync.extract.cost import COUNTED, ESTIMATED, Estimate, cost_of
from sync.extract.model import MAX_TOKENS, SYSTEM, ExtractionModel, ModelError
from sync.extract.schema import TOOL, check_relations
from sync.store.reviews import Proposal, Proposed, ReviewStore

log = logging.getLogger(__name__)
Clock = Callable[[], datetime]

__all__ = ["ModelError", "Plan", "Report", "estimate", "plan_extraction", "run_extraction"]


@dataclass(frozen=True)
class Plan:
    chunks: tuple[Chunk, ...]
    problems: tuple[Problem, ...]
    documents: int


def plan_extraction(locations: Sequence[str]) -> Plan:
    """The chunks of every document at `locations`; raises FileNotFoundError naming a missing one."""
    chunks: list[Chunk] = []
    problems: list[Problem] = []
    for location in locations:
        found, trouble = read_chunks(location)
        chunks += found
        problems += trouble
    return Plan(tuple(chunks), tuple(problems), len({c.ref.document for c in chunks}))


def estimate(plan: Plan, model: ExtractionModel) -> Estimate:
    """Input tokens from the count_tokens endpoint; 4 characters a token when it cannot answer.

    Raises ModelError when the key or the model is refused: no point asking to spend then.
    """
    try:
        tokens, method = sum(model.count_tokens(c) for c in plan.chunks), COUNTED
    except ModelError:
        raise
    except anthropic.APIError as exc:
        log.warning("count_tokens failed, estimating from characters instead: %s", exc)
        tokens = sum(_request_chars(c) for c in plan.chunks) // 4
        method = f"{ESTIMATED} (count_tokens failed: {type(exc).__name__})"
    return Estimate(model.model, plan.documents, len(plan.chunks), tokens, method, MAX_TOKENS * len(plan.chunks))


def _request_chars(chunk: Chunk) -> int:
    return len(SYSTEM) + len(json.dumps(TOOL)) + len(chunk.text) + 100


@dataclass
class Report:
    model: str
    chunks: int = 0
    failed: list[str] = field(default_factory=list)  # chunks whose call failed, with the error
    candidates: int = 0  # items that passed every check
    dropped: Counter[str] = field(default_factory=Counter)  # reason -> items dropped
    proposed: Proposed = Proposed()
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def cost(self) -> float | None:
        return cost_of(self.model, self.input_tokens, self.output_tokens)


def run_extraction(
    plan: Plan,
    model: ExtractionModel,
    reviews: ReviewStore,
    clock: Clock,
    *,
    progress: Callable[[int, Chunk], None] | None = None,
) -> Report:
    """One call per chunk; each chunk's checked candidates are held as soon as it answers.

    Raises ModelError when the model cannot be used at all; a chunk whose call fails is reported
    and the others still run.
    """
    report = Report(model.model)
    for position, chunk in enumerate(plan.chunks, 1):
        if progress is not None:
            progress(position, chunk)
        try:
            reply = model.extract(chunk)
        except ModelError:
            raise
        except anthropic.APIError as exc:
            where = f"{chunk.ref.document} chunk {chunk.ref.index}"
            log.warning("extraction failed for %s: %s", where, exc)
            report.failed.append(f"{where}: {type(exc).__name__}: {exc}")
            continue
        report.chunks += 1
        report.input_tokens += reply.input_tokens
        report.output_tokens += reply.output_tokens
        if reply.tool_input is None:
            report.dropped["reply without a tool call"] += 1
            continue
        checked = check_relations(reply.tool_input, chunk)
        report.dropped.update(checked.dropped)
        report.candidates += len(checked.kept)
        proposals = [
            Proposal(c.src, c.rel, c.dst, c.evidence, chunk.ref, c.line, chunk.digest, model.model)
            for c in checked.kept
        ]
        if proposals:
            report.proposed = _add(report.proposed, reviews.propose(proposals, at=clock()))
    return report


def _add(a: Proposed, b: Proposed) -> Proposed:
    return Proposed(a.added + b.added, a.pending + b.pending, a.approved + b.approved, a.rejected + b.rejected)

"""`oncall-graph extract` and `oncall-graph review`: the command line's composition root for proposing
relations from documents with a model and deciding on them.

`extract` prints its estimate (tokens, and dollars where the model's price is known) before any
model call, then asks on the terminal; without a terminal it needs `--yes`.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from bot.query.replies import EXIT_OK, EXIT_USAGE, Outcome
from bot.settings import Settings
from bot.wiring import clock
from graph.review import PENDING, ProposedEdge, ReviewError
from sync.extract.chunks import Chunk
from sync.extract.cost import Estimate
from sync.extract.model import ExtractionModel, ModelConfig, ModelError
from sync.extract.run import Plan, Report, estimate, plan_extraction, run_extraction
from sync.store.fact_store import Store
from sync.store.reviews import ReviewStore

PROBLEMS_SHOWN = 20


class UsageError(Exception):
    """Bad usage or no usable input (exit status 2); `bot.cli.main` reports it like its own."""


def run_extract(args: argparse.Namespace, store: Store, settings: Settings, err: Console, stdin: TextIO) -> Outcome:
    locations = args.extract_docs or args.docs or list(settings.sources("docs"))
    if not locations:
        raise UsageError("extract needs documents: give --docs PATH (or set ONCALL_GRAPH_DOCS)")
    if not settings.anthropic_api_key.strip():
        raise UsageError("extract needs a model: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy)")
    try:
        plan = plan_extraction(locations)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from exc
    for problem in plan.problems[:PROBLEMS_SHOWN]:
        err.print(Text(str(problem), style="yellow"))
    if not plan.chunks:
        raise UsageError(f"no prose to extract from in {', '.join(locations)}")
    model = ExtractionModel(ModelConfig(settings.extract_model, settings.anthropic_api_key.strip(),
                                        settings.anthropic_base_url.strip()))  # fmt: skip
    try:
        cost = estimate(plan, model)
        for line in estimate_lines(cost):
            err.print(line)
        if not _confirmed(args.yes, err, stdin):
            return EXIT_OK, {"estimate": estimate_json(cost), "cancelled": True}, [Text("cancelled: no chunk was sent")]
        report = run_extraction(
            plan, model, ReviewStore(store), clock, progress=lambda n, c: _progress(err, plan, n, c)
        )
    except ModelError as exc:
        raise UsageError(str(exc)) from exc
    data = {"estimate": estimate_json(cost), **report_json(report, plan)}
    # Every chunk failing is no usable answer at all, like a sync whose every source failed.
    return EXIT_USAGE if report.failed and not report.chunks else EXIT_OK, data, report_lines(report)


def _confirmed(yes: bool, err: Console, stdin: TextIO) -> bool:
    if yes:
        return True
    if not stdin.isatty():
        raise UsageError("not run: confirm the estimate on a terminal, or pass --yes to run without asking")
    err.print(Text("Send these chunks to the model? [y/N] "), end="")
    return stdin.readline().strip().lower() in ("y", "yes")


def _progress(err: Console, plan: Plan, position: int, chunk: Chunk) -> None:
    ref = chunk.ref
    err.print(Text(f"reading {ref.document} chunk {ref.index} ({position}/{len(plan.chunks)})", style="dim"))


def _dollars(value: float | None) -> str:
    return "unknown (no price on file for this model)" if value is None else f"${value:,.4f}"


def estimate_lines(cost: Estimate) -> list[Text]:
    price = "" if cost.price is None else f" at ${cost.price[0]:g} in / ${cost.price[1]:g} out per million tokens"
    return [
        Text(f"extract with {cost.model}: {cost.chunks} chunks from {cost.documents} documents", style="bold"),
        Text(f"  input: {cost.input_tokens:,} tokens ({cost.method})"),
        Text(f"  output: at most {cost.max_output_tokens:,} tokens"),
        Text(f"  estimated cost{price}: input {_dollars(cost.input_cost)}, at most {_dollars(cost.max_cost)} in all"),
        Text("  (an estimate from list prices, not a quote; extracted edges are held for review)", style="dim"),
    ]


def estimate_json(cost: Estimate) -> dict[str, Any]:
    return {
        "model": cost.model, "documents": cost.documents, "chunks": cost.chunks, "input_tokens": cost.input_tokens,
        "input_tokens_method": cost.method, "max_output_tokens": cost.max_output_tokens,
        "estimated_input_cost_usd": cost.input_cost, "estimated_max_cost_usd": cost.max_cost,
    }  # fmt: skip


def report_json(report: Report, plan: Plan) -> dict[str, Any]:
    p = report.proposed
    return {
        "model": report.model, "chunks_read": report.chunks, "failed_chunks": report.failed,
        "candidates": report.candidates, "dropped": dict(report.dropped), "held": p.added,
        "already_pending": p.pending, "already_approved": p.approved, "previously_rejected": p.rejected,
        "input_tokens": report.input_tokens, "output_tokens": report.output_tokens, "cost_usd": report.cost,
        "problems": [str(problem) for problem in plan.problems],
    }  # fmt: skip


def report_lines(report: Report) -> list[Text]:
    p = report.proposed
    lines = [
        Text(f"held for review: {p.added} new extracted edges (oncall-graph review lists them)", style="bold"),
        Text(
            f"  {report.candidates} passed the checks; already pending {p.pending}, already approved {p.approved}, "
            f"rejected before (not proposed again) {p.rejected}"
        ),  # fmt: skip
    ]
    for reason, count in sorted(report.dropped.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(Text(f"  dropped {count}: {reason}", style="yellow"))
    for failure in report.failed:
        lines.append(Text(f"  failed: {failure}", style="red"))
    used = f"{report.input_tokens:,} input + {report.output_tokens:,} output tokens"
    lines.append(Text(f"  {report.chunks} chunks read with {report.model}: {used}, cost {_dollars(report.cost)}"))
    return lines


def run_review(args: argparse.Namespace, store: Store) -> Outcome:
    reviews = ReviewStore(store)
    if args.decision is None:
        if args.ids:
            raise UsageError("to decide, say approve or reject before the ids: oncall-graph review approve 3 4")
        pending = reviews.edges(PENDING)
        lines = [Text(f"{len(pending)} extracted edges await review", style="bold")]
        lines += [line for edge in pending for line in edge_lines(edge)]
        return EXIT_OK, {"pending": [edge_json(e) for e in pending]}, lines
    try:
        decided = reviews.decide(args.ids, args.decision, actor=args.by, at=clock())
    except ReviewError as exc:
        raise UsageError(str(exc)) from exc
    verb = "approved" if args.decision == "approve" else "rejected"
    lines = [Text(f"{verb} #{e.id}: {e.src} {e.rel} {e.dst} (by {args.by})") for e in decided]
    return EXIT_OK, {"decision": args.decision, "by": args.by, "edges": [edge_json(e) for e in decided]}, lines


def edge_lines(edge: ProposedEdge) -> list[Text]:
    return [
        Text(f"#{edge.id}  {edge.src} -{edge.rel}-> {edge.dst}", style="bold"),
        Text(f"      “{edge.evidence}”"),
        Text(f"      {edge.where}", style="dim"),
    ]


def edge_json(edge: ProposedEdge) -> dict[str, Any]:
    c = edge.chunk
    return {
        "id": edge.id, "src": edge.src, "rel": edge.rel, "dst": edge.dst, "evidence": edge.evidence,
        "document": c.document, "chunk": c.index, "lines": [c.first_line, c.last_line], "line": edge.line,
        "model": edge.model, "status": edge.status, "citation": edge.where, "decided_by": edge.decided_by,
    }  # fmt: skip

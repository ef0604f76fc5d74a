"""Where one Slack answer's time goes: the stage spans of each answer (`bot/telemetry/tracing.STAGES`),
received by the fake OTLP collector the bot exports to, summed per answer and summarized per stage.

An answer is one trace: the request's span (its signature stage and the ack), and the listener's
spans under it (the claim, the work slots, the query's stages, the post, the settlement). "other" is
what no stage covers: Bolt's dispatch to its listener, the gaps between stages.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from bench.measure import summary_ms
from bot.telemetry.tracing import STAGE, STAGES
from tests.fakes.otlp_receiver import OtlpReceiver, ReceivedSpan

REQUEST = "oncall-graph slack request"
ROWS = (*STAGES, "other", "in the bot")


@dataclass(frozen=True)
class Window:
    """The answers whose requests arrived between these two clocks (ns, `time.time_ns()`)."""

    label: str
    began_ns: int
    ended_ns: int
    answers: int


def per_answer(spans: Sequence[ReceivedSpan], window: Window) -> list[dict[str, float]]:
    """{row: seconds} per answer in the window: each stage summed over its spans (two work slots),
    "in the bot" from the request's arrival to the last span's end, "other" what the stages leave."""
    traces: dict[str, list[ReceivedSpan]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    answers = []
    for trace in traces.values():
        requests = [s for s in trace if s.name == REQUEST]
        if len(requests) != 1 or not window.began_ns <= requests[0].start_ns <= window.ended_ns:
            continue
        row = dict.fromkeys(STAGES, 0.0)
        for span in trace:
            if (stage := span.attributes.get(STAGE)) in row:
                row[stage] += span.seconds
        total = (max(s.end_ns for s in trace) - requests[0].start_ns) / 1e9
        answers.append({**row, "other": max(0.0, total - sum(row.values())), "in the bot": total})
    return answers


def settled(receiver: OtlpReceiver, windows: Sequence[Window]) -> bool:
    """Every answer of every window has exported its settlement, the last stage."""
    spans = list(receiver.spans)
    done = {s.trace_id for s in spans if s.name == "oncall-graph settlement"}
    arrived = [s for s in spans if s.name == REQUEST and s.trace_id in done]
    return all(sum(w.began_ns <= s.start_ns <= w.ended_ns for s in arrived) >= w.answers for w in windows)


def stage_table(receiver: OtlpReceiver, windows: Sequence[Window]) -> dict[str, dict[str, dict[str, float]]]:
    """{window label: {row: {p50, p99, runs}}} in milliseconds."""
    spans = list(receiver.spans)
    table = {}
    for window in windows:
        answers = per_answer(spans, window)
        if len(answers) != window.answers:
            raise RuntimeError(f"{window.label}: {len(answers)} traces for {window.answers} answers")
        table[window.label] = {row: summary_ms([a[row] for a in answers]) for row in ROWS}
    return table


def markdown(name: str, table: dict[str, dict[str, dict[str, float]]]) -> str:
    labels = list(table)
    head = " | ".join(f"{label} p50 / p99 ms" for label in labels)
    lines = [f"| {name} stage | {head} |", "| --- |" + " --- |" * len(labels)]
    for row in ROWS:
        cells = " | ".join(f"{table[label][row]['p50']:.2f} / {table[label][row]['p99']:.2f}" for label in labels)
        lines.append(f"| {row} | {cells} |")
    return "\n".join(lines)

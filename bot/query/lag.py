"""The lag question: which sources an answer may trust, for `oncall-graph lag`, its MCP tool, /graph-lag,
`/metrics` and the lag alerts. One answer, so every front lists the same sources, the same never-synced
ones and the same problems."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from bot.query.bundle import LagAnswer
from graph.facts import SourceMark
from graph.health.freshness import LagReport, StalePolicy, UnprovenRefusals, judge
from graph.health.source_problems import SourceProblems

NO_PROBLEMS: Mapping[str, SourceProblems] = {}
NONE_UNPROVEN: Mapping[str, UnprovenRefusals] = {}


def answer_lag(
    marks: Iterable[SourceMark],
    configured: Sequence[str],
    now: datetime,
    policy: StalePolicy,
    problems: Mapping[str, SourceProblems] = NO_PROBLEMS,
    unproven: Mapping[str, UnprovenRefusals] = NONE_UNPROVEN,
) -> LagAnswer:
    """Every stored source when none is configured, else the configured ones; pushed sources always
    (nothing configures them: a webhook creates them). A configured source with no mark never synced.

    `problems` are each source's applied read's problems (the store's `live_problems`); `unproven`,
    a pushed source's deliveries refused before they proved their sender, as this process saw them.
    """
    stored = {mark.name: mark for mark in marks}
    wanted = set(configured)
    chosen = [m for name, m in stored.items() if not wanted or name in wanted or m.pushed]
    never = tuple(name for name in configured if name not in stored)
    judged = judge(chosen, now, policy)
    sources = tuple(
        replace(s, read_problems=problems.get(s.name) or s.read_problems, unproven=unproven.get(s.name))
        for s in judged.sources
    )
    return LagAnswer(LagReport(sources, never))

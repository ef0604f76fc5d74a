"""The lag question: which sources an answer may trust, for `oncall-graph lag`, its MCP tool and /graph-lag."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from bot.query.bundle import LagAnswer
from graph.facts import SourceMark
from graph.freshness import StalePolicy, judge


def answer_lag(marks: Iterable[SourceMark], configured: Sequence[str], now: datetime, policy: StalePolicy) -> LagAnswer:
    """Every stored source when none is configured, else the configured ones; pushed sources always
    (nothing configures them: a webhook creates them). A configured source with no mark never synced."""
    stored = {mark.name: mark for mark in marks}
    wanted = set(configured)
    chosen = [m for name, m in stored.items() if not wanted or name in wanted or m.pushed]
    never = tuple(name for name in configured if name not in stored)
    return LagAnswer(judge(chosen, now, policy), never)

"""How fresh an answer is, in every reply (age footer, stale warning), and /graph-lag with its alerts."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from bot.render.freshness import Freshness
from bot.render.wording import format_age, more_problems, plural, problem_text, problems_heading, utc
from bot.slack.blocks.kit import (
    TEXT_BUDGET,
    Block,
    SlackMessage,
    code,
    context,
    escape,
    fit,
    header,
    message,
    pack,
    section,
    text_length,
)
from graph.health.freshness import FAILING, HELD, OK, OVERDUE, LagReport, LagTransition, SourceLag

ERROR_CHARS = 300
PROBLEM_CHARS = 200  # each read problem's line: ten of them stay inside one section
WARNED_SOURCES = 5


def graph_age(freshness: Freshness) -> str:
    """`graph 4 min old (oldest: deploys, synced 2026-11-29 14:56 UTC) · 120 entities, 300 edges`."""
    size = f"{plural(freshness.entities, 'entity', 'entities')}, {plural(freshness.edges, 'edge')}"
    oldest, age = freshness.oldest, freshness.age_seconds
    if oldest is None or oldest.last_success is None or age is None:
        return f"graph built {format_age((freshness.checked_at - freshness.built_at).total_seconds())} ago · {size}"
    return f"graph {format_age(age)} old (oldest: {oldest.name}, synced {utc(oldest.last_success)}) · {size}"


def freshness_blocks(freshness: Freshness) -> tuple[list[Block], Block]:
    """(the stale warning, shown near the top and never cut; the age footer)."""
    reasons = freshness.warnings
    footer = context(escape(graph_age(freshness)))
    if not reasons:
        return [], footer
    shown = [escape(r) for r in reasons[:WARNED_SOURCES]]
    more = f"; and {len(reasons) - WARNED_SOURCES} more" if len(reasons) > WARNED_SOURCES else ""
    warning = f"⚠ *stale graph*: {'; '.join(shown)}{more}. Answers use the last good data of each source."
    return [section(warning)], footer


def stale_prefix(freshness: Freshness) -> str:
    return "⚠ stale graph — " if freshness.stale else ""


def format_lag(
    report: LagReport,
    *,
    held: Mapping[str, str] | None = None,
    hygiene: Mapping[str, int] | None = None,
    now: datetime | None = None,
    coverage: str = "",
) -> SlackMessage:
    """/graph-lag: each source's state (ok, stale, failing, held), age, last error and held change
    with its problems; then hygiene counts.

    `held` names sources with a change held for review (name -> reason), besides those the
    report already carries; `hygiene` maps a problem ("dangling refs") to its count; `coverage` says
    how much the graph can know (how many components declare dependencies, how many had traffic).
    """
    held = dict(held or {})
    unhealthy = [f"{s.name} ({s.state})" for s in report.unhealthy] + [f"{n} ({HELD})" for n in sorted(held)]
    unhealthy += [f"{n} (never synced)" for n in report.never_synced]
    verdict = f"⚠ *graph is stale*: {escape(', '.join(unhealthy))}" if unhealthy else "✅ *all sources fresh*"
    head = [header("Graph lag"), section(verdict)]
    tail = [section(_hygiene_line(hygiene))] if hygiene else []
    if coverage:
        tail.append(section(f"*Coverage*: {escape(coverage)}"))
    if now is not None:
        tail.append(context(f"checked at {utc(now)}"))
    lines = [_source_line(s, held.pop(s.name, "")) for s in report.sources]
    lines += [
        f"⏸ HELD *{escape(n)}* — change held for review: {escape(r[:ERROR_CHARS])}" for n, r in sorted(held.items())
    ]
    lines += [f"{_FLAGS[OVERDUE]} *{escape(n)}* — never synced (no attempt recorded yet)" for n in report.never_synced]
    if not lines:
        lines = ["_no sources configured_"]
    room = TEXT_BUDGET - text_length(head + tail) - 100
    shown = fit(lines, room)
    body = pack(lines[:shown])
    if shown < len(lines):
        body.append(section(f"_… and {len(lines) - shown} more sources (`oncall-graph lag` lists all)_"))
    text = f"all {plural(len(report.sources), 'source')} fresh" if report.sources else "no sources configured"
    text = text if report.sources or not report.never_synced else "no source synced yet"
    text = f"graph is stale: {', '.join(unhealthy)}" if unhealthy else text
    return message(text, head + body + tail)


_FLAGS = {OK: "✅ ok", OVERDUE: "⚠ STALE", FAILING: "❌ FAILING", HELD: "⏸ HELD"}


def _source_line(lag: SourceLag, held: str) -> str:
    if lag.pushed:
        return _pushed_line(lag)
    if lag.age_seconds is None:
        age = "never synced" + (" (its first attempt failed)" if lag.last_error else "")
    else:
        applied = f" (last applied {utc(lag.last_success)})" if lag.last_success else ""
        age = f"{format_age(lag.age_seconds)} old{applied}"
    state = HELD if held else lag.state
    line = f"{_FLAGS[state]} *{escape(lag.name)}* — {age}, threshold {_threshold(lag.threshold_seconds)}"
    if lag.stale and state != OVERDUE:
        line += " ⚠ past its threshold"
    if lag.last_error:
        line += f"\n      last error: {code(lag.last_error[:ERROR_CHARS])}"
    reason = lag.held_reason or held
    if reason:
        line += f"\n      ⏸ change held for review: {escape(reason[:ERROR_CHARS])}"
        line += "".join(f"\n        • {escape(p[:ERROR_CHARS])}" for p in lag.problems)
    return line + _read_problem_lines(lag)


def _read_problem_lines(lag: SourceLag) -> str:
    """Its applied read's problems, bounded: the first few (errors first), then how many more."""
    found = lag.read_problems
    if found is None or not (found.total or found.skipped):
        return ""
    flag = "❌" if found.errors else "⚠"
    lines = f"\n      {flag} {escape(problems_heading(found))}"
    lines += "".join(f"\n        • {escape(problem_text(p)[:PROBLEM_CHARS])}" for p in found.shown)
    if more := more_problems(found):
        lines += f"\n        _{escape(more)}_"
    return lines


def _pushed_line(lag: SourceLag) -> str:
    """A push source: its last event, its limit (off by default), the last delivery refused after it
    proved its sender (stored), and those refused before that as this replica saw them (memory)."""
    if lag.last_success is None:
        last = "no event yet"
    else:
        last = f"last event {format_age(lag.age_seconds or 0.0)} ago ({utc(lag.last_success)})"
    flag = "⚠ STALE" if lag.stale else "✅ ok"
    line = f"{flag} *{escape(lag.name)}* (pushed) — {last}, limit {_threshold(lag.threshold_seconds)}"
    if lag.last_refused:
        when = f" at {utc(lag.last_refused_at)}" if lag.last_refused_at else ""
        line += f"\n      last authenticated delivery refused{when}: {code(lag.last_refused[:ERROR_CHARS])}"
    if lag.unproven:
        seen = lag.unproven
        line += (
            f"\n      {plural(seen.count, 'unauthenticated delivery', 'unauthenticated deliveries')} refused by this"
            f" replica since it started, the last at {utc(seen.last_at)}: {code(seen.last_why[:ERROR_CHARS])}"
        )
    return line


def _threshold(seconds: float | None) -> str:
    return "off" if seconds is None else format_age(seconds)


def _hygiene_line(counts: Mapping[str, int]) -> str:
    return "*Hygiene*: " + " · ".join(f"{escape(k)} {v}" for k, v in counts.items())


def format_lag_alert(transition: LagTransition) -> SlackMessage:
    """The channel alert when a source turns stale (past its limit, failing or held), or recovers."""
    lag = transition.lag
    name = escape(transition.source)
    if transition.stale:
        since = "never synced" if lag.age_seconds is None else f"last applied change {format_age(lag.age_seconds)} ago"
        detail = f"{since}, threshold {_threshold(lag.threshold_seconds)}"
        if lag.last_error:
            detail += f"; last error: {code(lag.last_error[:ERROR_CHARS])}"
        if lag.held_reason:
            detail += f"; change held for review: {escape(lag.held_reason[:ERROR_CHARS])}"
            detail += "".join(f"\n• {escape(p[:ERROR_CHARS])}" for p in lag.problems)
        why = {HELD: " (change held for review)", FAILING: " (its last read failed)"}.get(lag.state, "")
        body = f"⚠ *Source {name} is stale*{why}: {detail}\nAnswers keep using its last good data."
        text = f"⚠ oncall-graph source {transition.source} is stale{why}"
    else:
        when = f"synced {utc(lag.last_success)}" if lag.last_success else "synced again"
        body = f"✅ *Source {name} recovered*: {when}."
        text = f"✅ oncall-graph source {transition.source} recovered"
    return message(text, [section(body), context(f"at {utc(transition.at)}")])

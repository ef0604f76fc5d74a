"""Words every renderer shares (terminal, Slack): ages, counts, summarized lists, times."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from graph.facts import Problem
from graph.health.source_problems import SourceProblems, place


def format_age(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def summarized(items: Sequence[str], shown: int) -> str:
    head = ", ".join(items[:shown])
    return head if len(items) <= shown else f"{head} and {len(items) - shown} more"


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 hop`, `2 hops`, `3 entities` (with `many` for irregular plurals)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def utc(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def window_span(since: datetime, now: datetime) -> str:
    """A window's two ends: one date when both fall on the same day, else each with its own."""
    end = f"{now:%H:%M}" if since.date() == now.date() else f"{now:%Y-%m-%d %H:%M}"
    return f"{since:%Y-%m-%d %H:%M} – {end} UTC"


def window_token(window: timedelta) -> str:
    """A window as people type it and `parse_window` reads it back: `6h`, `30m`, `90s`."""
    seconds = int(window.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 1)}s"


def problem_text(problem: Problem) -> str:
    """`error: catalog/shop.yaml document 2, field kind: missing or empty kind: skipped` — the file, its
    line or document, and the field, in every lag front."""
    field = f", field {problem.field}" if problem.field else ""
    return f"{problem.severity}: {place(problem.where)}{field}: {problem.message}"


def problems_heading(found: SourceProblems) -> str:
    """`3 problems in its last applied read (1 error; 2 skipped on purpose)`: a YAML document that is
    no descriptor, spans that make no call."""
    parts = [plural(found.errors, "error")] if found.errors else []
    if found.skipped:
        parts.append(f"{found.skipped:,} skipped on purpose")
    detail = f" ({'; '.join(parts)})" if parts else ""
    return f"{plural(found.total, 'problem')} in its last applied read{detail}"


def more_problems(found: SourceProblems) -> str:
    return f"… and {found.more} more (oncall-graph lint lists them all)" if found.more else ""

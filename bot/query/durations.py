"""Times people type: ISO 8601 instants and windows like `6h`, `30m`, `2d`."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_WINDOW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|hours?|d|days?|w)\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_instant(text: str) -> datetime:
    """ISO 8601 with `Z` or an offset; a naive time is taken as UTC. Always returns UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"expected an ISO 8601 time such as 2026-11-29T15:00:00Z, got {text!r}") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def parse_window(text: str) -> timedelta:
    """`6h`, `30m`, `2d`, `90s`, `1w` (a bare number is hours)."""
    if re.fullmatch(r"\s*\d+(\.\d+)?\s*", text):
        return timedelta(hours=float(text))
    match = _WINDOW.match(text)
    if not match:
        raise ValueError(f"expected a window such as 6h, 30m or 2d, got {text!r}")
    seconds = float(match.group(1)) * _UNITS[match.group(2)[0].lower()]
    if seconds <= 0:
        raise ValueError(f"the window must be longer than zero, got {text!r}")
    return timedelta(seconds=seconds)

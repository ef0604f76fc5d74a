"""Times people type: ISO 8601 instants and windows like `6h`, `30m`, `2d`."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

_WINDOW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|hours?|d|days?|w)\s*$", re.IGNORECASE)
# Anything a person may have meant as a window: a number of any form (signs, exponents, inf) and a unit.
_WINDOW_LIKE = re.compile(
    r"^\s*[-+]?(\d[\d.,_]*(e[-+]?\d+)?|\.\d+|inf(inity)?|nan)\s*(s|sec|m|min|h|hr|hours?|d|days?|w|weeks?)\s*$",
    re.IGNORECASE,
)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
SHORTEST, LONGEST = timedelta(minutes=1), timedelta(days=365)
ALLOWED = "from 1 minute to 1 year (1m … 365d)"
_EXPECTED = f"expected a window such as 6h, 30m or 2d, {ALLOWED}"


def parse_instant(text: str) -> datetime:
    """ISO 8601 with `Z` or an offset; a naive time is taken as UTC. Always returns UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"expected an ISO 8601 time such as 2026-11-29T15:00:00Z, got {_shown(text)}") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def looks_like_window(text: str) -> bool:
    """Whether `text` was meant as a window, valid or not (`6h`, but also `0h`, `1e400h`, `-2d`)."""
    return bool(_WINDOW_LIKE.match(text))


def parse_window(text: str) -> timedelta:
    """`6h`, `30m`, `2d`, `90s`, `1w` (a bare number is hours), from 1 minute to 1 year."""
    if re.fullmatch(r"\s*\d+(\.\d+)?\s*", text):
        return check_window(float(text) * 3600, text)
    match = _WINDOW.match(text)
    if not match:
        raise ValueError(f"{_EXPECTED}; got {_shown(text)}")
    return check_window(float(match.group(1)) * _UNITS[match.group(2)[0].lower()], text)


def check_window(seconds: float, text: str) -> timedelta:
    """The window of `seconds`, or ValueError naming the allowed range (never an OverflowError)."""
    if not math.isfinite(seconds) or not SHORTEST.total_seconds() <= seconds <= LONGEST.total_seconds():
        raise ValueError(f"{_EXPECTED}; got {_shown(text)}")
    return timedelta(seconds=seconds)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")

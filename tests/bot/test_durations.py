from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from bot.query.durations import parse_window
from bot.telemetry.log_format import MAX_MESSAGE, BoundedLines


@pytest.mark.parametrize("text", ["0h", "30s", "1e400h", "99999999999w", "-2h", "inf h", "366d", "junk"])
def test_windows_outside_one_minute_to_one_year_are_refused_by_name(text: str) -> None:
    with pytest.raises(ValueError, match="1 minute to 1 year|such as 6h"):
        parse_window(text)


def test_windows_inside_the_range_parse() -> None:
    assert parse_window("1m") == timedelta(minutes=1)
    assert parse_window("365d") == timedelta(days=365)
    assert parse_window("6") == timedelta(hours=6)


def test_a_huge_log_message_is_clipped_and_says_how_much() -> None:
    record = logging.LogRecord("x", logging.WARNING, "", 0, "refused %s", ("y" * 100_000,), None)
    BoundedLines().filter(record)
    assert len(record.getMessage()) < MAX_MESSAGE + 50
    assert "more characters" in record.getMessage()

"""JSON log lines: one object per line with time, level, logger, message, extra fields, exceptions."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import datetime

import pytest

from bot.telemetry.log_format import JsonFormatter, configure_logging


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("tests.json_logs")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_line_carries_time_level_logger_message_and_extra_fields(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    logger.info("source %s %s", "catalog:x", "applied", extra={"source": "catalog:x", "duration": 0.25})
    [line] = lines(stream)
    assert line["level"] == "INFO" and line["logger"] == "tests.json_logs"
    assert line["message"] == "source catalog:x applied"
    assert line["source"] == "catalog:x" and line["duration"] == 0.25
    assert datetime.fromisoformat(str(line["time"])).utcoffset() is not None
    assert "args" not in line and "exception" not in line


def test_an_exception_is_serialized_with_its_type_message_and_traceback(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    try:
        {}["missing"]
    except KeyError:
        logger.exception("lookup failed", extra={"entity": object()})
    [line] = lines(stream)
    error = line["exception"]
    assert isinstance(error, dict) and error["type"] == "KeyError" and error["message"] == "'missing'"
    assert "Traceback" in error["traceback"] and "KeyError: 'missing'" in error["traceback"]
    assert str(line["entity"]).startswith("<object object")  # not JSON itself: written as text
    assert len(stream.getvalue().splitlines()) == 1  # the traceback stays inside the one line


def test_an_unknown_log_format_names_the_setting() -> None:
    with pytest.raises(ValueError, match="ONCALL_GRAPH_LOG_FORMAT.*'xml'"):
        configure_logging("xml")

"""Log output for `serve`: the usual text lines, or one JSON object per line for log pipelines.

A JSON line carries time, level, logger and message, every `extra=` field the call passed
(source, command, entity, duration in seconds, ...) and, for an exception, its type, message
and traceback. No dependency: the standard library formats it.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

FORMATS = ("text", "json")
MAX_MESSAGE = 2000  # characters of one log message; a value a request carried can be megabytes
MAX_TRACEBACK = 20_000
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"
# Attributes every LogRecord has; anything else on a record came from `extra=`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text` cut at `limit` characters, saying how much was left out."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


class BoundedLines(logging.Filter):
    """Every record's message and `extra=` strings clipped, whatever logged it (ours, Bolt, waitress)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if len(message) > MAX_MESSAGE:
            record.msg, record.args = clip(message), None
        for key, value in list(vars(record).items()):
            if key not in _STANDARD and isinstance(value, str) and len(value) > MAX_MESSAGE:
                setattr(record, key, clip(value))
        return True


class TextFormatter(logging.Formatter):
    def formatException(self, ei: Any) -> str:
        return clip(super().formatException(ei), MAX_TRACEBACK)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update((key, value) for key, value in vars(record).items() if key not in _STANDARD)
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            line["exception"] = {
                "type": type(error).__name__,
                "message": clip(str(error)),
                "traceback": clip(self.formatException(record.exc_info), MAX_TRACEBACK),
            }
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def configure_logging(log_format: str, *, level: int = logging.INFO) -> None:
    """Once, in the composition root: every handler of the root logger gets the chosen format."""
    if log_format not in FORMATS:
        raise ValueError(f"ONCALL_GRAPH_LOG_FORMAT must be one of {', '.join(FORMATS)}; got {log_format!r}")
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler())
    formatter = JsonFormatter() if log_format == "json" else TextFormatter(TEXT_FORMAT)
    for handler in root.handlers:
        handler.setFormatter(formatter)
        if not any(isinstance(f, BoundedLines) for f in handler.filters):
            handler.addFilter(BoundedLines())
    root.setLevel(level)
    # Two INFO lines per job run, every poll interval, on every replica: noise, not news. Its
    # warnings and job errors still come through.
    logging.getLogger("apscheduler.executors.default").setLevel(logging.WARNING)

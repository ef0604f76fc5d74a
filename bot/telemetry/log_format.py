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
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"
# Attributes every LogRecord has; anything else on a record came from `extra=`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


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
                "message": str(error),
                "traceback": self.formatException(record.exc_info),
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
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    for handler in root.handlers:
        handler.setFormatter(formatter)
    root.setLevel(level)
    # Two INFO lines per job run, every poll interval, on every replica: noise, not news. Its
    # warnings and job errors still come through.
    logging.getLogger("apscheduler.executors.default").setLevel(logging.WARNING)

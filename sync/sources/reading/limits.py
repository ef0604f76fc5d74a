"""How much of a source one read may take: bytes per file or body, and seconds for the whole read.

Readers are called with (source, location) only, so the configured limits reach them through a
context variable that `registry.read_changed` sets around each read (a worker process, which
sees the default, is only ever handed files the parent has already measured).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
DEFAULT_READ_DEADLINE = 120.0


@dataclass(frozen=True, slots=True)
class ReadLimits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES  # a file, or a fetched body, past this is refused
    deadline_seconds: float = DEFAULT_READ_DEADLINE  # one source's whole read, however it trickles


_CURRENT: ContextVar[ReadLimits] = ContextVar("read_limits", default=ReadLimits())  # noqa: B039 - frozen


def current_limits() -> ReadLimits:
    return _CURRENT.get()


@contextlib.contextmanager
def reading_with(limits: ReadLimits) -> Iterator[None]:
    token = _CURRENT.set(limits)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def too_big_message(size: int, limit: int) -> str:
    return f"too big: {size:,} bytes, over the limit of {limit:,} (ONCALL_GRAPH_MAX_FILE_BYTES); file skipped"

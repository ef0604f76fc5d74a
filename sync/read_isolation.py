"""Every source read at once, each in its own thread under its own deadline, so one bad source
(a feed that drips a byte a second, an API that pages for ever) never delays the others.

A read past its deadline is abandoned: its thread is left to finish (readers cut their own HTTP
bodies at the same deadline, so it ends soon after) and the source fails this sync, keeping its
last good facts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime

from graph.facts import SourceFacts
from sync.sources.registry import SourceAccess, SourceSpec, read_changed
from sync.store.fact_codec import EncodedFacts

Read = tuple[SourceFacts | EncodedFacts, str]  # (facts, content version)
MAX_ERROR_CHARS = 500  # a source's recorded error; an exception's text may quote a whole body


class ReadDeadlineError(TimeoutError):
    """A source's read did not finish within its deadline."""


@dataclass(frozen=True, slots=True)
class SourceRead:
    result: Read | None | Exception  # None: unchanged since its last success
    started: datetime
    seconds: float


def read_all(
    specs: Sequence[SourceSpec], previous: Mapping[str, str], access: SourceAccess, clock: Callable[[], datetime]
) -> dict[str, SourceRead]:
    """Each source's read (or the exception that ended it), all read in parallel threads."""
    if not specs:
        return {}
    wait = access.limits.deadline_seconds + access.timeout  # grace for a reader's last request
    pool = ThreadPoolExecutor(max_workers=len(specs), thread_name_prefix="source-read")
    started = clock()
    try:
        futures = {s.name: pool.submit(_timed_read, s, previous.get(s.name, ""), access, clock) for s in specs}
        end = time.monotonic() + wait
        reads = {}
        for spec in specs:
            try:
                reads[spec.name] = futures[spec.name].result(timeout=max(0.0, end - time.monotonic()))
            except FutureTimeout:
                error = ReadDeadlineError(f"read did not finish within its deadline of {wait:g} s; abandoned")
                reads[spec.name] = SourceRead(error, started, wait)
        return reads
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _timed_read(spec: SourceSpec, previous: str, access: SourceAccess, clock: Callable[[], datetime]) -> SourceRead:
    started, timer = clock(), time.perf_counter()
    try:
        result: Read | None | Exception = read_changed(spec, previous, access, now=started)
    except Exception as exc:  # noqa: BLE001 - a broken source must never stop the others
        result = exc
    return SourceRead(result, started, time.perf_counter() - timer)


def failure_text(exc: Exception) -> str:
    """The source's error for an exception, bounded (an exception may quote what it failed on)."""
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."

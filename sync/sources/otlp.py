"""OTLP/JSON trace files and folders, read into observed calls (`--otlp PATH`).

A file holds one OTLP/JSON document (pretty-printed or not), or JSON Lines of them as the
Collector's file exporter writes them; a folder's `*.json`, `*.jsonl` and `*.ndjson` files are read
in name order, hidden folders skipped. JSON Lines are read a line at a time and only the spans of
calls are kept, so memory grows with the calls, not the files; each file is refused past the byte
limit and the whole read stops at the read deadline. Each bad file, line or span is a problem
naming it, and the rest is read. The spans are paired and counted by `otlp_pairing`.

A last line that does not end in a newline and is not JSON is the exporter's write in progress:
it is skipped with a warning, not reported as a broken file.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

import orjson

from graph.facts import Problem, SourceFacts
from sync.sources.otlp_pairing import SpanIndex, observe
from sync.sources.otlp_spans import Locate, Skipped, resource_spans, spans_of
from sync.sources.reading.folder_walk import walk_folder
from sync.sources.reading.limits import current_limits, too_big_message
from sync.sources.reading.textfiles import FetchError
from sync.sources.trace_options import TraceOptions

SUFFIXES = (".json", ".jsonl", ".ndjson")
PROBLEMS_PER_FILE = 20  # a file of junk says so in a few lines; the rest are counted
NOT_TRACES = 'not an OTLP/JSON trace document: no resourceSpans (nor {"result": ...} or {"batches": [...]} around them)'
_SPAN_ID = re.compile(rb'"spanId"\s*:\s*"([^"\\]*)"')
_BOM = b"\xef\xbb\xbf"

DEFAULT_TRACES = TraceOptions()
Line = tuple[int, bytes]  # (line number, the line as read, newline included)


def read_otlp(
    source: str, location: str, *, traces: TraceOptions = DEFAULT_TRACES, now: datetime | None = None
) -> SourceFacts:
    """The calls the spans at `location` show: one observation and one count per edge.

    `now` is not used: the window ends at the newest span read (see `otlp_pairing`), so files
    read again at a later sync give the same edges. Raises FetchError only when the location is
    missing or the read passes its deadline.
    """
    del now
    files, problems = _files(location)
    reading = _Reading(SpanIndex(), Skipped(), time.monotonic() + current_limits().deadline_seconds)
    for name, path in files:
        problems += reading.file(name, path)
    observed = observe(source, location, reading.index, reading.skipped, traces)
    return SourceFacts(
        source, observations=observed.observations, calls=observed.calls, problems=(*problems, *observed.notes)
    )


def _files(location: str) -> tuple[list[tuple[str, Path]], list[Problem]]:
    """(name in citations, path) of each trace file at `location`, and the symlinks refused on the way."""
    path = Path(location)
    if path.is_file():
        return [(location, path)], []
    if not path.is_dir():
        raise FetchError(f"cannot read {location}: no such file or folder")
    folder = Path(os.path.abspath(location))

    def named(relative: str) -> str:
        return f"{folder.name}/{relative}"

    walked = walk_folder(folder, _is_trace_file, _is_hidden, named)
    return sorted((named(relative), full) for relative, full in walked.files), list(walked.problems)


def _is_trace_file(name: str) -> bool:
    return name.lower().endswith(SUFFIXES) and not _is_hidden(name)


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


@dataclass(slots=True)
class _Reading:
    """One read of a source: the spans kept so far, and when it must give up."""

    index: SpanIndex
    skipped: Skipped
    deadline: float  # time.monotonic() at which the read stops

    def file(self, name: str, path: Path) -> list[Problem]:
        """Every call span of one file into the index; what was wrong with it, bounded."""
        limit = current_limits().max_file_bytes
        problems: list[Problem] = []
        try:
            size = path.stat().st_size
            if size > limit:
                return [Problem(name, too_big_message(size, limit), "", "error")]
            with path.open("rb") as handle:
                self._records(name, self._lines(name, handle, limit, problems), problems)
        except FetchError:
            raise  # the read's deadline: the whole read fails, not this file
        except OSError as exc:
            problems.append(Problem(name, f"cannot read: {exc.strerror or exc}", "", "error"))
        return _bounded(name, problems)

    def _lines(self, name: str, handle: BinaryIO, limit: int, problems: list[Problem]) -> Iterator[Line]:
        """The file's lines, numbered from 1, stopped at the byte limit (a file growing as it is read)."""
        read = 0
        for number, line in enumerate(handle, 1):
            if time.monotonic() > self.deadline:
                seconds = current_limits().deadline_seconds
                raise FetchError(f"{name}: not read within the read deadline of {seconds:g} s")
            read += len(line)
            if read > limit:
                problems.append(Problem(name, too_big_message(read, limit), "", "error"))
                return
            yield number, line.removeprefix(_BOM) if number == 1 else line

    def _records(self, name: str, lines: Iterator[Line], problems: list[Problem]) -> None:
        """JSON Lines when the first line is a document of its own; else one document over all lines."""
        head: list[Line] = []
        for number, line in lines:
            head.append((number, line))
            if not line.strip():
                continue
            document, error, _ = _parse(line)
            if error is None:
                self._document(document, _at_line(name, number), problems)
                self._json_lines(name, lines, problems)
            else:
                self._whole(name, [*head, *lines], problems)
            return

    def _json_lines(self, name: str, lines: Iterable[Line], problems: list[Problem]) -> None:
        for number, line in lines:
            if not line.strip():
                continue
            document, error, _ = _parse(line)
            if error is None:
                self._document(document, _at_line(name, number), problems)
            elif not line.endswith(b"\n"):
                message = "last line incomplete (no newline at its end: still being written?); skipped"
                problems.append(Problem(f"{name}:{number}", message))
            else:
                problems.append(Problem(f"{name}:{number}", error, "", "error"))

    def _whole(self, name: str, lines: list[Line], problems: list[Problem]) -> None:
        """A document over several lines, within the byte limit; if it is no JSON as a whole but
        some of its lines are, JSON Lines whose first line is broken."""
        data = b"".join(line for _, line in lines)
        document, error, failed_at = _parse(data)
        if error is None:
            first = next(number for number, line in lines if line.strip())
            self._document(document, _at_span(name, data, first), problems)
        elif any(isinstance(_parse(line)[0], dict) for _, line in lines if line.strip()):
            self._json_lines(name, lines, problems)
        else:
            problems.append(Problem(f"{name}:{failed_at}", error, "", "error"))

    def _document(self, document: object, locate: Locate, problems: list[Problem]) -> None:
        found = resource_spans(document)
        if found is None:
            problems.append(Problem(locate(None), NOT_TRACES, "", "error"))
            return
        for span in spans_of(*found, locate, problems, self.skipped):
            self.index.add(span)


def _parse(data: bytes) -> tuple[object, str | None, int]:
    """(the JSON value, None, 0) or (None, why it is not JSON, the line it fails on)."""
    try:
        return orjson.loads(data), None, 0
    except orjson.JSONDecodeError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            line = data[: bad.start].count(b"\n") + 1
            return None, f"not UTF-8 text ({bad.reason} at byte {bad.start}); skipped", line
        return None, f"not valid JSON: {exc.msg} (column {exc.colno})", exc.lineno


def _at_line(name: str, number: int) -> Locate:
    where = f"{name}:{number}"
    return lambda _: where


def _at_span(name: str, data: bytes, first: int) -> Locate:
    """Each span's own line in a document over several lines (the line its `spanId` is on)."""
    lines: dict[str, int] = {}
    line, last = 1, 0
    for found in _SPAN_ID.finditer(data):
        line += data.count(b"\n", last, found.start())
        last = found.start()
        lines.setdefault(found.group(1).decode("utf-8", "replace"), line)
    return lambda raw: f"{name}:{lines.get(raw, first) if isinstance(raw, str) else first}"


def _bounded(name: str, problems: list[Problem]) -> list[Problem]:
    if len(problems) <= PROBLEMS_PER_FILE:
        return problems
    rest = problems[PROBLEMS_PER_FILE:]
    severity = "error" if any(p.severity == "error" for p in rest) else "warning"
    return [*problems[:PROBLEMS_PER_FILE], Problem(name, f"{len(rest):,} more problems in this file", "", severity)]

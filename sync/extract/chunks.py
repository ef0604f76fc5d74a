"""Documents cut into chunks a model reads one at a time, each knowing the lines it spans.

The text of a chunk is the document's prose as `sync.sources.runbook_text` reads it (markup removed; code,
comments and tables skipped), whole paragraphs at a time, so the evidence a model quotes can be
checked against exactly what it was shown and traced back to a line.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from graph.facts import Problem
from graph.review import ChunkRef
from sync.sources.reading.textfiles import FetchError, fetch_text
from sync.sources.runbook_text import Line, split_paragraphs
from sync.sources.runbooks import find_runbooks

MAX_CHUNK_CHARS = 6_000  # about 1,500 tokens: small enough that evidence checks stay sharp


@dataclass(frozen=True)
class Chunk:
    ref: ChunkRef
    lines: tuple[Line, ...]  # (line number, text); number 0 is the blank line between paragraphs

    @cached_property
    def text(self) -> str:
        return "\n".join(text for _, text in self.lines)

    @cached_property
    def digest(self) -> str:
        """Identifies the chunk's content: an edit elsewhere in the document does not change it."""
        return hashlib.blake2b(self.text.encode(), digest_size=16).hexdigest()

    @cached_property
    def _flat(self) -> tuple[str, list[int], list[int]]:
        starts, numbers, parts, offset = [], [], [], 0
        for number, text in self.lines:
            if not number:
                continue
            starts.append(offset)
            numbers.append(number)
            parts.append(text)
            offset += len(text) + 1
        return " ".join(parts), starts, numbers

    def flat_text(self) -> str:
        """The chunk's words separated by single spaces: what evidence is compared against."""
        return self._flat[0]

    def line_of(self, offset: int) -> int:
        """The document line holding character `offset` of `flat_text()`."""
        _, starts, numbers = self._flat
        return numbers[max(0, bisect_right(starts, offset) - 1)] if numbers else self.ref.first_line


def read_chunks(location: str, *, max_chars: int = MAX_CHUNK_CHARS) -> tuple[list[Chunk], list[Problem]]:
    """Every chunk of every runbook at `location` (a file or a folder); unreadable files are problems.

    Raises FileNotFoundError when `location` does not exist.
    """
    chunks: list[Chunk] = []
    problems: list[Problem] = []
    for name, path in find_runbooks(location):
        try:
            text = fetch_text(str(path)).text
        except FetchError as exc:
            problems.append(Problem(name, str(exc), "file", "error"))
            continue
        if "\x00" in text:
            problems.append(Problem(name, "binary file, not text; skipped", "encoding", "error"))
            continue
        found, trouble = split_chunks(name, text, max_chars=max_chars)
        chunks += found
        problems += trouble
    return chunks, problems


def split_chunks(name: str, text: str, *, max_chars: int = MAX_CHUNK_CHARS) -> tuple[list[Chunk], list[Problem]]:
    """Whole paragraphs per chunk up to `max_chars`; a longer paragraph is cut between its lines."""
    paragraphs, problems = split_paragraphs(name, text)
    groups: list[list[Line]] = []
    size = max_chars + 1  # start a chunk with the first paragraph
    for paragraph in paragraphs:
        lines = [line for line in paragraph.lines if line[1]]
        if not lines:
            continue
        length = sum(len(t) + 1 for _, t in lines) + 1  # and the blank line before it
        if size + length > max_chars + 1:
            groups.append([])
            size = 0
        elif groups[-1]:
            groups[-1].append((0, ""))
            size += 1
        for line in lines:
            if size + len(line[1]) > max_chars and groups[-1]:
                groups.append([])
                size = 0
            groups[-1].append(line)
            size += len(line[1]) + 1
    return [_chunk(name, index, group) for index, group in enumerate(groups, 1) if group], list(problems)


def _chunk(name: str, index: int, lines: Sequence[Line]) -> Chunk:
    numbers = [n for n, _ in lines if n]
    return Chunk(ChunkRef(name, index, min(numbers), max(numbers)), tuple(lines))

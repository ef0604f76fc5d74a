"""What was wrong in a source's applied read, as every lag front shows it: a count and the first few.

A read that applied still has problems: documents that are no Backstage entities (no `kind`, no
`metadata`), names breaking Backstage's rules, symlinks refused, files that could not be read.
They are stored with the read's facts; the lag fronts show them, bounded (the first few, errors
first, and how many more), each naming its file, its line or document, and its field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from graph.facts import Problem

PROBLEMS_SHOWN = 10  # per source, in every front; the rest are counted ("and K more")
ERROR = "error"

_LINE = re.compile(r":(\d+)(?::\d+)?$")
_DOCUMENT = re.compile(r"#(\d+)$")


@dataclass(frozen=True, slots=True)
class SourceProblems:
    """The problems of one source's applied read, notes (files that are no descriptors) only counted."""

    total: int  # problems, notes aside
    errors: int  # of which a part was dropped
    shown: tuple[Problem, ...]  # the first PROBLEMS_SHOWN, errors first
    skipped: int = 0  # notes: YAML that is no descriptor, skipped on purpose

    @property
    def more(self) -> int:
        return max(self.total - len(self.shown), 0)


def gather(problems: Iterable[Problem], unread: int = 0, shown: int = PROBLEMS_SHOWN) -> SourceProblems:
    """`problems` counted and the first `shown` kept, errors first; `unread` more stored but not decoded
    (a catalog with thousands of warnings is counted, not decoded whole, at every /metrics scrape)."""
    wrong, notes = [], 0
    for problem in problems:
        if problem.note:
            notes += 1
        else:
            wrong.append(problem)
    errors = sum(1 for p in wrong if p.severity == ERROR)
    first = sorted(wrong, key=lambda p: p.severity != ERROR)[:shown]
    return SourceProblems(len(wrong) + unread, errors, tuple(first), notes)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a problem is: the file, and the line or the document number inside it when known."""

    file: str
    line: int | None = None
    document: int | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.file} line {self.line}"
        if self.document is not None:
            return f"{self.file} document {self.document}"
        return self.file


def place(where: str) -> Place:
    """`catalog/a.yaml:12:3` -> line 12; `catalog/a.yaml#2` -> document 2; `runbooks/r.md §Failover` -> the file."""
    where = where.split(" §", 1)[0]
    if found := _DOCUMENT.search(where):
        return Place(where[: found.start()], document=int(found.group(1)))
    if found := _LINE.search(where):
        return Place(where[: found.start()], line=int(found.group(1)))
    return Place(where)

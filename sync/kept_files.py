"""Facts kept per file: a file of a local source that fails to read keeps its last good facts.

A folder source is read as a whole, but it fails file by file: one file turned into invalid YAML,
emptied, grown past the size limit or made unreadable must not retire the entities it held (an
incident bot that forgets `redis` because of one bad commit answers the wrong thing). Such a
file's stored facts replace what this read got from it, and the source is marked failing with
the file named. Only a file that is gone retires its facts (the drop limit still guards that).
Trace files are not kept one by one: their edges count calls across all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from graph.facts import Problem, SourceFacts
from graph.observed import is_trace_source
from sync.sources.reading.textfiles import is_url
from sync.sources.reading.yaml_documents import is_empty_file, is_read_failure
from sync.sources.registry import WALKERS, SourceSpec
from sync.store.fact_codec import PROBLEM, EncodedFacts, Row, encode_rows

SHOWN_FILES = 3  # files named in the source's error; the rest are counted


@dataclass(frozen=True, slots=True)
class KeptFiles:
    facts: SourceFacts | EncodedFacts  # the read, with the kept files' last good facts in place of theirs
    error: str = ""  # "" when every file read; else the source's error, naming the files


def keep_unread_files(
    spec: SourceSpec,
    facts: SourceFacts | EncodedFacts,
    count: int,
    stored_count: int,
    stored: Callable[[], Sequence[Row]],
) -> KeptFiles:
    """`facts` (`count` facts) with each unread file's stored rows kept.

    `stored` gives the source's live rows and is called only when a file failed or the read holds
    fewer facts than `stored_count`: an ordinary re-read of a big catalog decodes nothing here.
    """
    if spec.kind in WALKERS or is_url(spec.location):
        return KeptFiles(facts)  # one body or one API walk: a failed read keeps everything already
    if is_trace_source(spec.name):
        # An observed edge counts calls across every file read and cites one of them: no fact is one
        # file's, and the file it cites moves as traces come and go. A bad file is its problems.
        return KeptFiles(facts)
    failures = _read_failures(facts.problems)
    # A file emptied in the same read in which another grew leaves the count as it was: the reader's
    # note for a file with no documents sends the read on to the per-file comparison all the same.
    told_empty = any(is_empty_file(p) for p in facts.problems)
    if not failures and not told_empty and count >= stored_count:
        return KeptFiles(facts)  # no file failed and none can have been emptied
    rows = list(facts.rows) if isinstance(facts, EncodedFacts) else list(encode_rows(facts))
    read_files = {file for row in rows if row[0] != PROBLEM and (file := row_file(row))}
    stored_by_file = _by_file(stored())
    emptied = {f for f in stored_by_file if f not in read_files and f not in failures and _exists(spec.location, f)}
    kept = {f for f in stored_by_file if f in failures} | emptied
    reasons = {**failures, **{f: f"{f}: it yields no facts now (emptied?)" for f in emptied}}
    if not reasons:
        return KeptFiles(facts)
    merged = [row for row in rows if row[0] == PROBLEM or row_file(row) not in kept]
    seen = {row[1] for row in merged}
    merged += [row for f in sorted(kept) for row in stored_by_file[f] if row[1] not in seen]
    count = sum(1 for row in merged if row[0] != PROBLEM)
    encoded = EncodedFacts(facts.source, merged, count, facts.problems)
    return KeptFiles(encoded, _error(reasons, kept))


def row_file(row: Row) -> str:
    """The file a stored fact came from (its citation's, or a passage's, locator without the place in it)."""
    payload = orjson.loads(row[2])
    citation = payload.get("citation")
    locator = citation[1] if isinstance(citation, list) and len(citation) > 1 else payload.get("locator", "")
    return locator_file(str(locator))


def locator_file(locator: str) -> str:
    """`catalog/data.yaml#2`, `runbooks/redis.md:8`, `runbooks/redis.md §Failover` -> the file."""
    for mark in (" §", "#"):
        locator = locator.split(mark, 1)[0]
    head, sep, tail = locator.partition(":")
    while sep and not tail.split(":", 1)[0].isdigit():  # a colon inside a name (rare), not `:line`
        more, sep, tail = tail.partition(":")
        head = f"{head}:{more}"
    return head


def _read_failures(problems: Iterable[Problem]) -> dict[str, str]:
    failures: dict[str, str] = {}
    for problem in problems:
        if is_read_failure(problem):
            failures.setdefault(locator_file(problem.where), f"{problem.where}: {problem.message}")
    return failures


def _by_file(rows: Iterable[Row]) -> Mapping[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        if row[0] != PROBLEM and (file := row_file(row)):
            grouped.setdefault(file, []).append(row)
    return grouped


def _exists(location: str, file: str) -> bool:
    """Whether a file named in locators is still there: relative to a folder's parent; for a file
    source, the file itself or one its Locations name, named as the source is (`examples/a.yaml`)."""
    root = Path(location)
    if not root.is_dir():
        return Path(file).exists()
    return (root.resolve().parent / file).exists()


def _error(reasons: Mapping[str, str], kept: set[str]) -> str:
    shown = [f"{reasons[f]}{'' if f in kept else ' (no earlier facts to keep)'}" for f in sorted(reasons)[:SHOWN_FILES]]
    more = f" (and {len(reasons) - SHOWN_FILES} more files)" if len(reasons) > SHOWN_FILES else ""
    noun = "file" if len(reasons) == 1 else "files"
    return f"{len(reasons)} {noun} not read, last good facts kept: {'; '.join(shown)}{more}"

"""Multi-document YAML files turned into numbered Python documents, with problems instead of exceptions.

A broken document costs only itself: when a file does not parse as a whole it is split on its
`---` document markers and each part is parsed alone, so the other documents are kept.
Big loads (many megabytes, e.g. a cold load of a 100k-entity catalog) use two worker processes,
which parse with rapidyaml when it is installed.
"""

from __future__ import annotations

import codecs
import functools
import json
import multiprocessing
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from graph.facts import Problem
from sync.collector import collector_paused
from sync.sources.reading.limits import current_limits, too_big_message
from sync.sources.reading.yaml_aliases import AliasBombError, load_all_bounded

try:
    import ryml
except ImportError:  # the `fast` extra is optional
    ryml = None

T = TypeVar("T")
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Starting the workers costs about 0.5 s, which PyYAML spends on about 1 MB (bench: 3 MB took
# 2.4-3.0 s in-process and 1.1-1.3 s with workers).
PARALLEL_MIN_BYTES = 1024 * 1024
WORKERS = 2

# `---` at column 0 starts a document; YAML forbids it inside scalars and flow collections there.
_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)
_PREAMBLE_LINE = re.compile(r"[ \t]*(#.*)?|%.*")
# What a file (or a document of it) that could not be read at all says: its earlier facts are kept.
_READ_FAILURE = re.compile(
    r"(not valid JSON|cannot read|binary file|not UTF-8 text|too big|document \d+ (is not valid YAML and )?was skipped)"
)


@dataclass(frozen=True, slots=True)
class YamlDocuments:
    """The non-empty documents of one file as (1-based index, document), and what was wrong with it."""

    name: str
    documents: tuple[tuple[int, object], ...] = ()
    problems: tuple[Problem, ...] = ()


def load_yaml(data: bytes | str, name: str, *, fast: bool = False) -> YamlDocuments:
    """Parse every document of `data`; never raises on bad content.

    `fast=True` tries rapidyaml first and falls back to PyYAML whenever the result could differ.
    """
    text = data if isinstance(data, str) else _decode(data, name)
    if isinstance(text, Problem):
        return YamlDocuments(name, problems=(text,))
    if name.lower().endswith(".json"):
        return _load_json(text, name)
    if fast and isinstance(data, bytes):
        documents = _load_with_ryml(data.removeprefix(codecs.BOM_UTF8), text)
        if documents is not None:
            return YamlDocuments(name, _numbered(documents))
    try:
        return YamlDocuments(name, _numbered(list(load_all_bounded(text, _LOADER))))
    except Exception:  # noqa: BLE001 - any parser failure is retried document by document
        return _load_by_parts(text, name)


def _load_json(text: str, name: str) -> YamlDocuments:
    """A `.json` file (a saved catalog API response) as one document: JSON with tabs is no YAML."""
    try:
        return YamlDocuments(name, _numbered([json.loads(text)]))
    except json.JSONDecodeError as exc:
        message = f"not valid JSON and was skipped: {exc.msg}"
        return YamlDocuments(name, problems=(Problem(f"{name}:{exc.lineno}:{exc.colno}", message, "", "error"),))
    except RecursionError:
        return YamlDocuments(name, problems=(Problem(name, "not valid JSON: nested too deeply", "", "error"),))


NO_DOCUMENTS = "holds no documents (empty, or comments only): skipped"


def is_empty_file(problem: Problem) -> bool:
    """Whether `problem` says its file read fine but holds nothing (emptied by a bad merge, or new)."""
    return problem.note and problem.message == NO_DOCUMENTS


def is_read_failure(problem: Problem) -> bool:
    """Whether `problem` says its file, or a document of it, could not be read (not a bad field)."""
    return problem.severity == "error" and _READ_FAILURE.match(problem.message) is not None


def load_yaml_file(path: Path, name: str, *, fast: bool = False) -> YamlDocuments:
    """Read and parse one file; an unreadable or oversized file becomes a problem."""
    if (refused := oversized(path, name)) is not None:
        return refused
    try:
        data = path.read_bytes()
    except OSError as exc:
        return YamlDocuments(name, problems=(Problem(name, f"cannot read file: {exc.strerror}", "", "error"),))
    return load_yaml(data, name, fast=fast)


def oversized(path: Path, name: str) -> YamlDocuments | None:
    """The problem of a file past the size limit, measured before it is read; None when it fits."""
    limit = current_limits().max_file_bytes
    try:
        size = path.stat().st_size
    except OSError:
        return None  # reading it reports why
    return (
        YamlDocuments(name, problems=(Problem(name, too_big_message(size, limit), "", "error"),))
        if size > limit
        else None
    )


def load_yaml_files(
    files: Sequence[tuple[Path, str]], *, parallel_min_bytes: int = PARALLEL_MIN_BYTES
) -> list[YamlDocuments]:
    """Parse (path, name) files in order; with more than `parallel_min_bytes` in all, in worker processes."""
    # The collector's passes over the documents tripled the parent's CPU time (bench dense-100k).
    with collector_paused():
        if _total_size(files) <= parallel_min_bytes:
            return [load_yaml_file(path, name) for path, name in files]
        if any(oversized(path, name) for path, name in files):
            return [load_yaml_file(path, name) for path, name in files]  # rare: the parent measures each
        try:
            return _load_in_workers(files)
        except (OSError, BrokenProcessPool):
            # No worker processes here (sandbox, resource limits): slower, but the load still happens.
            return [load_yaml_file(path, name) for path, name in files]


def map_yaml_files(
    files: Sequence[tuple[Path, str]],
    convert: Callable[[YamlDocuments], T],
    *,
    parallel_min_bytes: int = PARALLEL_MIN_BYTES,
) -> list[T]:
    """`convert` of each parsed (path, name) file, in order; in the worker processes of big loads.

    There `convert` runs beside the parsing, on both cores: it must be a module-level function
    (or a `functools.partial` of one) and give a result that pickles cheaply.
    """
    with collector_paused():
        if _total_size(files) <= parallel_min_bytes or any(oversized(path, name) for path, name in files):
            return [convert(load_yaml_file(path, name)) for path, name in files]
        try:
            return _in_workers(functools.partial(_convert_in_worker, convert), files)
        except (OSError, BrokenProcessPool):
            return [convert(load_yaml_file(path, name)) for path, name in files]


def _load_in_workers(files: Sequence[tuple[Path, str]]) -> list[YamlDocuments]:
    paths = [str(path) for path, _ in files]
    loaded = _in_workers(_load_in_worker, files)
    return [_received(result, path) for result, path in zip(loaded, paths, strict=True)]


def _in_workers(work: Callable[[str, str], T], files: Sequence[tuple[Path, str]]) -> list[T]:
    """`work(path, name)` of each file in worker processes, in order."""
    workers = min(WORKERS, len(files))
    with ProcessPoolExecutor(workers, mp_context=_forkserver(), initializer=_quiet_worker) as pool:
        # Small chunks: the last one keeps one worker busy alone (bench: 12 files took 0.6 s).
        chunk = max(1, len(files) // (workers * 32))
        paths = [str(path) for path, _ in files]
        names = [name for _, name in files]
        return list(pool.map(work, paths, names, chunksize=chunk))


def _forkserver() -> multiprocessing.context.BaseContext:
    # forkserver: forking a process that runs threads (the bot's scheduler, HTTP server) is unsafe.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", *_main_package_modules()])
    return context


def _main_package_modules() -> list[str]:
    """The loaded modules of the main module's package, but the main module itself.

    Each worker runs the main module again (`python -m bot.cli`: importing the whole bot, 0.8 s of
    CPU per worker). With its package's modules loaded once in the fork server, which forks the
    workers, little is left to import. The main module itself must not be: running a module that
    is already imported makes runpy warn.
    """
    main = getattr(sys.modules["__main__"].__spec__, "name", None)
    if main is None or "." not in main or main.endswith(".__main__"):
        return []  # a script, or a package's __main__ (workers do not run those again)
    package = main.split(".")[0]
    return sorted(name for name in sys.modules if name.split(".")[0] == package and name != main)


def _total_size(files: Sequence[tuple[Path, str]]) -> int:
    total = 0
    for path, _ in files:
        try:
            total += path.stat().st_size
        except OSError:
            continue
    return total


def _quiet_worker() -> None:
    # rapidyaml writes C++ diagnostics to fd 2 before raising; the parent reports the problem itself.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


@dataclass(frozen=True, slots=True)
class _Emitted:
    """A file's documents as rapidyaml's JSON text, not yet decoded."""

    name: str
    documents: list[str]


def _load_in_worker(path: str, name: str) -> YamlDocuments | _Emitted:
    # Documents cross back to the parent as JSON text rather than pickled objects: the parent
    # decodes them as fast as it would unpickle them, and the workers skip building and pickling
    # them (bench dense-100k: 2.1-2.6 s instead of 2.7-4.0 s).
    try:
        data = Path(path).read_bytes()
    except OSError:
        return load_yaml_file(Path(path), name)
    text = _decode(data, name)
    if name.lower().endswith(".json"):
        return load_yaml(data, name)
    emitted = None if isinstance(text, Problem) else _ryml_json(data.removeprefix(codecs.BOM_UTF8), text)
    return load_yaml(data, name) if emitted is None else _Emitted(name, emitted)


def _convert_in_worker(convert: Callable[[YamlDocuments], T], path: str, name: str) -> T:
    with collector_paused():
        return convert(_received(_load_in_worker(path, name), path))


def _received(result: YamlDocuments | _Emitted, path: str) -> YamlDocuments:
    if isinstance(result, YamlDocuments):
        return result
    documents = _decoded(result.documents)
    if documents is None:  # a float or a constant, which PyYAML may read otherwise
        return load_yaml_file(Path(path), result.name)
    return YamlDocuments(result.name, _numbered(documents))


def _decode(data: bytes, name: str) -> str | Problem:
    if b"\x00" in data[:8192]:
        return Problem(name, "binary file, not YAML text", "", "error")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return Problem(f"{name}:{line}", f"not UTF-8 text (byte {exc.start}): file skipped", "", "error")


def _numbered(documents: list[object]) -> tuple[tuple[int, object], ...]:
    return tuple((index, doc) for index, doc in enumerate(documents, 1) if doc is not None)


def _load_by_parts(text: str, name: str) -> YamlDocuments:
    documents: list[object] = []
    problems: list[Problem] = []
    for first_line, part in _parts(text):
        try:
            documents.extend(load_all_bounded(part, _LOADER))
        except Exception as exc:  # noqa: BLE001 - PyYAML also raises ValueError, RecursionError
            documents.append(None)
            problems.append(_syntax_problem(exc, name, len(documents), first_line, part))
    return YamlDocuments(name, _numbered(documents), tuple(problems))


def _parts(text: str) -> Iterator[tuple[int, str]]:
    """(0-based first line, text) of each `---`-started part; a comment-only head joins the next."""
    starts = [0, *(m.start() for m in _DOCUMENT_START.finditer(text) if m.start() > 0), len(text)]
    part_begin: int | None = None
    for begin, end in zip(starts, starts[1:], strict=False):
        part_begin = begin if part_begin is None else part_begin
        part = text[part_begin:end]
        if end < len(text) and _is_preamble(part):
            continue
        yield text.count("\n", 0, part_begin), part
        part_begin = None


def _is_preamble(part: str) -> bool:
    return all(_PREAMBLE_LINE.fullmatch(line) for line in part.splitlines())


def _syntax_problem(exc: Exception, name: str, index: int, first_line: int, part: str) -> Problem:
    line, column = _position(getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None), exc, part)
    detail = str(exc).replace("\n", " ")
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        detail = f"{exc.context + ', ' if exc.context else ''}{exc.problem}"
        opened = _opened_here(exc, part, first_line, (line, column))
        if opened is not None:
            (line, column), detail = opened
    elif isinstance(exc, yaml.reader.ReaderError):
        char = exc.character
        shown = f"#x{char:04x}" if isinstance(char, int) else repr(char)
        detail = f"unacceptable character {shown}: {exc.reason}"
    if isinstance(exc, AliasBombError):
        message = f"document {index} was skipped: {detail}"
    else:
        message = f"document {index} is not valid YAML and was skipped: {detail}"
    return Problem(f"{name}:{first_line + line + 1}:{column + 1}", message, "", "error")


# Constructs that open and must close: a parser that gives up inside one names where it opened.
_CLOSED_CONSTRUCTS = ("flow sequence", "flow mapping", "quoted scalar")


def _opened_here(
    exc: yaml.MarkedYAMLError, part: str, first_line: int, found: tuple[int, int]
) -> tuple[tuple[int, int], str] | None:
    """(position, detail) naming where the construct began, from PyYAML's context mark, and where
    the parser gave up; None when the context names no other place."""
    if exc.context_mark is None or not exc.context or not exc.problem:
        return None
    began = _position(exc.context_mark, exc, part)
    if began == found:
        return None
    construct = exc.context.removeprefix("while parsing ").removeprefix("while scanning ")
    construct = construct.removeprefix("a ").removeprefix("an ")
    at = f"found at {first_line + found[0] + 1}:{found[1] + 1}"
    if construct in _CLOSED_CONSTRUCTS:
        return began, f"{construct} opened here is not closed ({exc.problem}; {at})"
    return began, f"{construct} that starts here: {exc.problem} ({at})"


def _position(mark: object, exc: Exception, part: str) -> tuple[int, int]:
    """(0-based line, column) in `part` of a mark (or a reader error's position)."""
    position = getattr(mark, "index", None) if mark is not None else getattr(exc, "position", None)
    if not isinstance(position, int):
        return 0, 0
    # An error found at the end of a part belongs to its last line, not the next document's `---`.
    position = min(position, len(part.rstrip()))
    line = part.count("\n", 0, position)
    return line, position - (part.rfind("\n", 0, position) + 1)


# --- rapidyaml: about 3x faster than libyaml on catalogs, but its JSON output loses YAML 1.1
# typing (yes/no, ~, octal, dates, tags, aliases), and it accepts some text PyYAML rejects. It is
# used only on the subset where the two were fuzzed to agree and when every value is one PyYAML
# would type the same way; anything doubtful returns None so the caller parses with PyYAML.

# Tabs and unusual line breaks; `...` markers, directives and top-level block scalars; tags,
# anchors, aliases and characters PyYAML refuses to start a scalar with.
_ODD_CHARACTERS = "\t\r\x85\u2028\u2029\ufeff"
_ODD_LINE_START = re.compile(r"\n(?:\.\.\.|(?:---[ ]+)?[|>%])")
_NODE_START = re.compile(r"[!&*@`\]}]")
_BEFORE_NODE = frozenset(" \n[]{},:?-")
# Strings that PyYAML, reading them plain, might not take as strings: a cheap scan of the JSON
# text for candidates (words and things starting like numbers or dates), checked with PyYAML's own
# resolvers. A closing quote is never followed by a candidate's first character, so the scan
# stays aligned on string starts.
_TYPED_WORDS = "yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|~|null|Null|NULL|<<|="
_TYPED_CANDIDATE = re.compile(
    r'"(?=[-+.0-9yYnNtTfFoO~<=!&*"])(?:[-+.0-9!&*](?:[^"\\]|\\.)*"|(?:' + _TYPED_WORDS + r')"|")'
)
_TYPED = [
    (first, regex)
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
    for tag, regex in resolvers
    if tag != "tag:yaml.org,2002:str"
]


class _DoubtfulError(Exception):
    pass


def _load_with_ryml(data: bytes, text: str) -> list[object] | None:
    emitted = _ryml_json(data, text)
    return None if emitted is None else _decoded(emitted)


def _ryml_json(data: bytes, text: str) -> list[str] | None:
    """Each document as rapidyaml's JSON, when nothing in the text or its strings is doubtful.

    Doubtful numbers are only found when decoding (`_decoded`).
    """
    if ryml is None or _is_unusual(text):
        return None
    try:
        tree = ryml.parse_in_arena(data)
        root = tree.root_id()
        if tree.is_stream(root):
            nodes = list(ryml.children(tree, root))
        else:
            nodes = [] if tree.type(root) == ryml.NOTYPE else [root]
        emitted = [str(ryml.emit_json(tree, node)) for node in nodes]
        if len(nodes) != _count_documents(text) or any(map(_has_typed_string, emitted)):
            return None
    except Exception:  # noqa: BLE001 - ryml errors, invalid JSON strings
        return None
    return emitted


def _decoded(emitted: list[str]) -> list[object] | None:
    # One decode per file costs the parent a third less than one per document (bench dense-100k);
    # the count check refuses text that is not exactly one JSON value per document.
    try:
        documents = _JSON.decode("[" + ",".join(emitted) + "]")
    except Exception:  # noqa: BLE001 - invalid JSON, doubtful numbers, nesting too deep
        return None
    return documents if isinstance(documents, list) and len(documents) == len(emitted) else None


def _is_unusual(text: str) -> bool:
    if not text.endswith("\n") or any(c in text for c in _ODD_CHARACTERS):
        return True
    if _ODD_LINE_START.search("\n" + text):
        return True
    for match in _NODE_START.finditer(text):
        at = match.start()
        before = text[at - 1] if at else "\n"
        if before in _BEFORE_NODE and before + match.group() not in ("[]", "{}"):
            return True
    return False


def _count_documents(text: str) -> int:
    # What PyYAML would number; a mismatch means the two parsers split the stream differently.
    starts = [m.start() for m in _DOCUMENT_START.finditer(text)]
    return len(starts) + int(not _is_preamble(text[: starts[0] if starts else len(text)]))


def _has_typed_string(emitted: str) -> bool:
    for match in _TYPED_CANDIDATE.finditer(emitted):
        value = json.loads(match.group())
        if any(regex.match(value) for first, regex in _TYPED if first == value[:1]):
            return True
    return False


def _doubtful(_: str) -> object:
    raise _DoubtfulError


# One decoder for all: `json.loads` with hooks builds a new one per call.
_JSON = json.JSONDecoder(parse_float=_doubtful, parse_constant=_doubtful)

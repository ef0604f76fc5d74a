"""Backstage `kind: Location` entities in a local catalog: the files their `spec.target` and
`spec.targets` name, read as Backstage's file reader would, within bounds.

A target is followed when it is a path (a glob such as `./components/*.yaml` included) relative to
the Location's file and inside the catalog root (the source folder, or the folder holding a source
file). Anything else is said, never done silently: a URL is not fetched, a path out of the root is
not read, a target of a provider type (`github-discovery`) is not run, a missing file is named.
Targets are followed from the files they add too, each file read once, so loops end.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graph.facts import Problem
from sync.sources.reading.limits import current_limits
from sync.sources.reading.shown import shown
from sync.sources.reading.yaml_documents import load_yaml

# A document that may be a Location, in YAML's block or flow style or in JSON: parsed to be sure.
_MAYBE_LOCATION = re.compile(rb"""kind["']?\s*:\s*["']?location\b""", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_GLOB = re.compile(r"[*?[]")
_READ_TYPES = frozenset({"file", "url"})  # `url` targets that are relative paths are files beside it


@dataclass(frozen=True, slots=True)
class Followed:
    """The files Location targets add to a walk, and what was not followed and why."""

    files: list[tuple[Path, str]]  # (path, name in locators), in the order found
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class _Target:
    where: str  # the Location's `file#document`
    field: str  # `spec.target` or `spec.targets[i]`
    text: str
    kind: str  # spec.type, "" when absent
    optional: bool  # spec.presence: optional


def follow_locations(files: list[tuple[Path, str]], root: Path, named: Callable[[Path], str]) -> Followed:
    """The files the Locations among `files` name, and the files those name, each once.

    `root` bounds what is read; `named` gives a new file's name in locators (as the walk names its
    files). Files already in `files` are not added again.
    """
    top = root.resolve()
    seen = {_identity(path) for path, _ in files}
    queue = list(files)
    added: list[tuple[Path, str]] = []
    problems: list[Problem] = []
    while queue:
        path, name = queue.pop(0)
        for target in _targets(path, name):
            for found in _followed(target, path.parent, top, problems):
                identity = _identity(found)
                if identity is None or identity in seen:
                    continue
                seen.add(identity)
                entry = (found, named(found))
                added.append(entry)
                queue.append(entry)
    return Followed(added, tuple(problems))


def unfollowed_targets(where: str, document: object, reason: str) -> list[Problem]:
    """A warning for each target of a Location document that is not followed, for `reason`."""
    return [
        Problem(where, f"{shown(t.text)}: not read ({reason})", t.field) for t in _document_targets(where, document)
    ]


def _targets(path: Path, name: str) -> Iterator[_Target]:
    if name.lower().endswith(".json"):
        return  # a saved catalog API response: the entities its Locations name are in it already
    try:
        if path.stat().st_size > current_limits().max_file_bytes:
            return  # the reader says it is too big
        data = path.read_bytes()
    except OSError:
        return  # the reader says why it cannot be read
    if (b"ocation" not in data and b"OCATION" not in data) or _MAYBE_LOCATION.search(data) is None:
        return  # nearly every file: a substring search first, ten times quicker than the pattern's
    for index, document in load_yaml(data, name).documents:
        yield from _document_targets(f"{name}#{index}", document)


def _document_targets(where: str, document: object) -> Iterator[_Target]:
    if not isinstance(document, Mapping) or str(document.get("kind", "")).lower() != "location":
        return
    spec: Any = document.get("spec")
    if not isinstance(spec, Mapping):
        return  # the parser says what is wrong with it
    written = spec.get("type")
    kind = written if isinstance(written, str) else ""
    optional = spec.get("presence") == "optional"
    if isinstance(spec.get("target"), str):
        yield _Target(where, "spec.target", spec["target"], kind, optional)
    targets = spec.get("targets")
    if isinstance(targets, list):
        for index, text in enumerate(targets):
            if isinstance(text, str):
                yield _Target(where, f"spec.targets[{index}]", text, kind, optional)


def _followed(target: _Target, base: Path, top: Path, problems: list[Problem]) -> list[Path]:
    """The files a target names, inside `top`; each other outcome a problem."""

    def said(message: str) -> list[Path]:
        problems.append(Problem(target.where, f"{shown(target.text)}: {message}", target.field))
        return []

    if target.kind and target.kind not in _READ_TYPES:
        return said(f"a {target.kind} location is read by a Backstage provider oncall-graph does not run: not read")
    if _URL.match(target.text):
        return said("a URL: not fetched (give it as a --catalog source of its own to read it)")
    candidates = _matches(base, target.text)
    if not candidates:
        if target.optional:
            return []  # Backstage skips an optional target that is not there, without a word
        what = "matches no file" if _GLOB.search(target.text) else "no such file"
        return said(f"{what}: nothing read")
    found = []
    for candidate in candidates:
        real = candidate.resolve()
        if not real.is_relative_to(top):
            said(f"outside the catalog root {top}: not read")
        elif candidate.is_dir():
            if not _GLOB.search(target.text):
                said("a folder, not a file: not read (name its files, or a glob such as dir/*.yaml)")
        else:
            found.append(real)
    return found


def _matches(base: Path, text: str) -> list[Path]:
    if _GLOB.search(text):
        # As Backstage's file reader globs: `**` spans folders, and hidden files are not matched.
        pattern = os.path.join(glob.escape(str(base)), text)
        return [Path(found) for found in sorted(glob.glob(pattern, recursive=True))]
    joined = base / text
    return [joined] if joined.exists() else []


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino

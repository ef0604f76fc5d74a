"""The files under a source folder, following symlinks only inside it and never twice.

A symlink out of the folder (to `/etc`, to another checkout) would read what the source's owner
never committed; a symlink loop (`sub/loop -> ..`) would walk for ever. Both are refused and
reported as the source's problems (which link, and why), never followed silently or crashed on.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graph.facts import Problem


@dataclass(frozen=True, slots=True)
class WalkedFiles:
    files: list[tuple[str, Path]]  # (path relative to the folder, in POSIX form; the path to open)
    problems: tuple[Problem, ...] = ()


def walk_folder(
    folder: Path, wanted: Callable[[str], bool], skip_dir: Callable[[str], bool], shown_as: Callable[[str], str]
) -> WalkedFiles:
    """Files under `folder` whose name is `wanted`, in no particular order.

    `skip_dir` names folders never entered (hidden ones); `shown_as` turns a relative path into the
    name problems give (the locator prefix of the source).
    """
    root = folder.resolve()
    seen_dirs = {_identity(root)}
    seen_files: set[tuple[int, int]] = set()
    found: list[tuple[str, Path]] = []
    problems: list[Problem] = []
    for current, dirs, files in os.walk(folder, followlinks=True):
        here = Path(current)
        kept_dirs = []
        for name in sorted(dirs):
            path = here / name
            if skip_dir(name):
                continue
            refusal = _refusal(path, root, seen_dirs, "folder")
            if refusal:
                problems.append(Problem(shown_as(_relative(path, folder)), refusal, "", "error"))
                continue
            kept_dirs.append(name)
        dirs[:] = kept_dirs
        for name in files:
            path = here / name
            if not wanted(name):
                continue
            refusal = _refusal(path, root, seen_files, "file")
            if refusal:
                problems.append(Problem(shown_as(_relative(path, folder)), refusal, "", "error"))
                continue
            found.append((_relative(path, folder), path))
    return WalkedFiles(found, tuple(problems))


def _refusal(path: Path, root: Path, seen: set[tuple[int, int]], what: str) -> str:
    """Why `path` is not followed ("" when it is), remembering it as seen."""
    try:
        real = path.resolve(strict=True)
        identity = _identity(real)
    except (OSError, RuntimeError):  # a dangling link, or a loop the resolver itself gave up on
        return "symlink that leads nowhere (dangling or a loop): not followed"
    if path.is_symlink() and not real.is_relative_to(root):
        # The link as written: `/proc/self/environ` resolves to a new path in every process, and a
        # problem that changes with the process would be a new fact at every read.
        return f"symlink to {os.readlink(path)}, outside the source folder: not followed"
    if identity in seen:
        if what == "folder":
            return f"symlink loop: {real} is already read through another path; not followed"
        return f"the same file as another one read (a symlink to {real}): not read twice"
    seen.add(identity)
    return ""


def _identity(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino


def _relative(path: Path, folder: Path) -> str:
    return path.relative_to(folder).as_posix()

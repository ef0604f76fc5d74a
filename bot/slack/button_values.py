"""A button's value read back into the command it re-runs, or what is wrong with it.

The bot writes every value (`{"cmd", "name", "depth" | "since"}`: bot/slack/blocks), but a click
arrives from outside, and a forged or stale one is still a person waiting: what cannot be read is
named in the reply, never met with silence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.query.kinds import BLAST, SUSPECTS

SHOWN = 40  # characters of a bad value quoted back


class UnreadableButton(ValueError):
    """The message says which part of the value is wrong, in words for the person who clicked."""


@dataclass(frozen=True, slots=True)
class Rerun:
    command: str  # BLAST or SUSPECTS
    text: str  # the command's text, as if typed: `NAME [--depth N]` or `NAME [--since 6h] [--depth N]`


def read_rerun(value: object) -> Rerun:
    """The command a share or pick button re-runs; UnreadableButton naming the part that is wrong."""
    try:
        fields = json.loads(value) if isinstance(value, str) else None
    except (ValueError, RecursionError):
        fields = None
    if not isinstance(fields, dict):
        raise UnreadableButton("its value is not the command it should carry")
    command, name = fields.get("cmd"), fields.get("name")
    if command not in (BLAST, SUSPECTS):
        raise UnreadableButton(f"it asks for {_quoted(command)}, not /blast-radius or /suspects")
    if not isinstance(name, str) or not name.strip():
        raise UnreadableButton(f"its name is {_quoted(name)}, not an entity's name")
    depth = _flag("depth", _depth(fields.get("depth")))
    if command == BLAST:
        return Rerun(command, _with(name, depth))
    since = fields.get("since")
    if since is not None and not isinstance(since, str):
        raise UnreadableButton(f"its window is {_quoted(since)}, not a window like 6h")
    # The flags it was asked with, as the command line writes them (bot.slack.arguments reads them).
    return Rerun(command, _with(name, " ".join(part for part in (_flag("since", since or ""), depth) if part)))


def _depth(depth: object) -> str:
    """A depth is a whole number of hops, 1 or more (written as a number, or as its digits)."""
    if depth is None:
        return ""
    if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0:
        return str(depth)
    if isinstance(depth, str) and depth.isascii() and depth.isdigit() and 0 < len(depth) <= 6 and int(depth) > 0:
        return depth
    raise UnreadableButton(f"its depth is {_quoted(depth)}, not a whole number of hops")


def _flag(flag: str, value: str) -> str:
    return f"--{flag} {value}" if value else ""


def _with(name: str, extra: str) -> str:
    return f"{name} {extra}" if extra else name


def _quoted(value: object) -> str:
    plain = isinstance(value, str | int | float | bool | None)
    shown = json.dumps(value, ensure_ascii=False) if plain else f"a JSON {type(value).__name__}"
    return shown if len(shown) <= SHOWN else shown[: SHOWN - 1] + "…"

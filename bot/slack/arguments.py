"""The text of /blast-radius and /suspects: a name, then the command line's flags as people type them in
Slack (`--since 1h`, `--since=1h`, `since 1h`, `--depth 2`, `depth 2`, a trailing `6h` or `2`), or a
polite error naming the flag and what it takes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from bot.query.durations import looks_like_window, parse_window
from bot.query.kinds import BLAST as BLAST  # the names handlers have imported from here
from bot.query.kinds import SUSPECTS as SUSPECTS
from bot.query.kinds import question_kind

# The question kinds a slash command asks (`bot/query/kinds.py`), and how each is typed.
USAGE = {BLAST: "/blast-radius NAME [--depth N]", SUSPECTS: "/suspects NAME [--since 6h] [--depth 2]"}
FLAGS = {command: tuple(option.name for option in question_kind(command).options) for command in USAGE}
# `--since`, and the dashes a phone or macOS turns `--` into (`—since`, `–since`).
_FLAG = re.compile(r"^(?:--?|—|–)([a-z][\w-]*)(?:=(.*))?$", re.IGNORECASE)
# ASCII digits only, and few: `³` is a digit to isdigit(), and 5,000 nines are a name, not a depth.
_SIGNED = re.compile(r"^[-+]?[0-9]{1,6}$")
_KEYWORD = re.compile(r"^(since|depth)(?:=(.*))?$", re.IGNORECASE)


class CommandArgsError(ValueError):
    """A command's text the asker can correct: the message says what to change."""


@dataclass(frozen=True, slots=True)
class CommandArgs:
    name: str
    depth: int | None = None
    since: timedelta | None = None


def parse_command(command: str, text: str) -> CommandArgs:
    """The name and flags of a /blast-radius or /suspects text; CommandArgsError for a flag the command
    does not take, a flag without its value, or a value it cannot use."""
    words = text.split()
    name: list[str] = []
    given: dict[str, str] = {}
    i = 0
    while i < len(words):
        flag = _flag(words[i], last=i + 1 == len(words))
        if flag is None:
            name.append(words[i])
            i += 1
            continue
        key, value = flag.group(1).casefold(), flag.group(2)
        if key not in FLAGS[command]:
            raise CommandArgsError(_unknown(command, words[i]))
        if value is None:
            if i + 1 == len(words):
                raise CommandArgsError(f"--{key} needs a value, e.g. --{key} {'6h' if key == 'since' else '2'}")
            value = words[i + 1]
            i += 1
        given[key] = value
        i += 1
    return _checked(command, name, given)


def _flag(word: str, *, last: bool) -> re.Match[str] | None:
    """`--since`, `—since=1h`; `since` and `depth` bare only with a value after them; never `-2h` (a window)."""
    if looks_like_window(word):
        return None
    return _FLAG.match(word) or (_KEYWORD.match(word) if not last or "=" in word else None)


def _checked(command: str, name: list[str], given: dict[str, str]) -> CommandArgs:
    # The older habit: a trailing `2` (/blast-radius) or `6h` (/suspects) after the name.
    if len(name) > 1 and command == BLAST and "depth" not in given and _SIGNED.match(name[-1]):
        given["depth"] = name.pop()
    if len(name) > 1 and command == SUSPECTS and "since" not in given and looks_like_window(name[-1]):
        given["since"] = name.pop()
    since = None
    if "since" in given:
        try:
            since = parse_window(given["since"])
        except ValueError as exc:
            raise CommandArgsError(f"--since: {exc}") from None
    depth = _depth(given["depth"]) if "depth" in given else None
    return CommandArgs(" ".join(name), depth, since)


def _depth(value: str) -> int:
    if not (value.isascii() and value.isdigit() and len(value) <= 6) or int(value) < 1:
        raise CommandArgsError(f"--depth: expected a whole number of hops, 1 or more; got {value[:40]!r}")
    return int(value)


def _unknown(command: str, word: str) -> str:
    takes = " and ".join(f"--{flag}" for flag in FLAGS[command])
    return f"/{command} takes {takes}, not {word[:40]!r}"

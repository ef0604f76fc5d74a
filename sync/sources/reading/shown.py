"""Values quoted in problem messages, bounded: a message never grows with (or expands) its input.

`repr` of a value built from YAML aliases walks every expansion; `reprlib` stops at a few levels,
items and characters, so a 1 KB alias bomb or a 10 MB string is shown in under a line.
"""

from __future__ import annotations

import reprlib

MAX_CHARS = 160
_SHORT = reprlib.Repr()
_SHORT.maxlevel = 2
_SHORT.maxstring = 80
_SHORT.maxother = 80
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 4
_SHORT.maxlong = 40


def shown(value: object) -> str:
    """A bounded repr of `value` (strings quoted as repr quotes them, long ones cut with `...`)."""
    text = _SHORT.repr(value)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3] + "..."

"""JSON from outside, read within bounds: what nests too deep, and the members of a container past
its first few hundred, are left out before the text is parsed, so a hostile body costs one linear
scan and a small parse, and what can be read of it is still read.

Slack's deepest payloads (blocks in a message in an event) nest about a dozen levels and carry at
most 100 attachments and 50 blocks; PagerDuty's webhooks about six levels. A signed message nested
5,000 deep or carrying 5,000 attachments is still an alert someone waits on: its envelope, title
and service are near the top and are kept.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 32
MAX_MEMBERS = 256
# Strings whole (so a bracket or comma inside one is text), then the structure's own characters.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]', re.DOTALL)


def bounded(text: str, *, depth: int = MAX_DEPTH, members: int = MAX_MEMBERS) -> tuple[str, bool]:
    """(`text` with every array or object opened deeper than `depth` replaced by `null` and every
    container's members after its first `members` left out, whether anything was left out).

    Valid JSON stays valid; text that was not JSON stays not JSON (json.loads says so)."""
    out: list[str] = []
    kept = 0  # text before this offset is decided: written to `out`, or left out
    members_seen: list[int] = []  # per open container: the commas at its level (its members, less one)
    leaving_to = -1  # while leaving text out: the nesting level at which that ends
    keep_close = False  # whether the close that ends it is kept (a cut container's own close is)
    cut = False
    for token in _TOKENS.finditer(text):
        char = token.group()
        if len(char) != 1:
            continue  # a string, skipped whole
        if char in "[{":
            if leaving_to < 0 and len(members_seen) >= depth:
                out += [text[kept : token.start()], "null"]
                leaving_to, keep_close, cut = len(members_seen), False, True
            members_seen.append(0)
        elif char in "]}":
            if members_seen:
                members_seen.pop()
            if leaving_to >= 0 and len(members_seen) == leaving_to:
                kept, leaving_to = (token.start() if keep_close else token.end()), -1
        elif leaving_to < 0 and members_seen:  # a comma before the next member of the innermost container
            members_seen[-1] += 1
            if members_seen[-1] >= members:
                out.append(text[kept : token.start()])
                leaving_to, keep_close, cut = len(members_seen) - 1, True, True
    if leaving_to < 0:
        out.append(text[kept:])
    return "".join(out), cut


def loads_bounded(text: str) -> tuple[Any, bool]:
    """The JSON value `text` holds, within the bounds (ValueError when it is not JSON), and whether
    anything was left out to keep it there."""
    kept, cut = bounded(text)
    try:
        return json.loads(kept), cut
    except RecursionError:  # bounded as it is, never expected; a ValueError like any other bad body
        raise ValueError("JSON nested too deep") from None

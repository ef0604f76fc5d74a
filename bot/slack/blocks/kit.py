"""Block Kit pieces and Slack's size limits, so every formatter stays inside them by construction.

Limits (docs.slack.dev block reference; slack_sdk 3.48 validators): 50 blocks a message, section
text 3000, header 150, button text 75, action value 2000. Past roughly 12k characters of block
text Slack refuses a post with `msg_blocks_too_long` although every block is valid, so a
message's block text is kept under TEXT_BUDGET.
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from bot.render.dot import Picture
from bot.render.links import opened
from graph.citations import CitedSource, cite_edge, cited_sources
from graph.edges import EdgeFacts
from graph.naming.refs import short_name

Block = dict[str, Any]

MAX_BLOCKS = 50
SECTION_CHARS = 2900  # under the 3000 limit, so the joins and an ellipsis never tip it over
HEADER_CHARS = 150
BUTTON_CHARS = 75
VALUE_CHARS = 2000
MAX_BUTTONS = 25
TEXT_BUDGET = 9000
FALLBACK_CHARS = 300  # the notification text: a summary, never the answer itself
NAME_CHARS = 100
CITE_CHARS = 400
SOURCES_SHOWN = 3


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """What the bot posts: notification `text`, Block Kit `blocks`, and, when the blocks had to be
    cut to fit Slack's limits, the whole answer as plain text (`full_text`) to attach as a file.

    The whole answer is written only when read: on a large graph it costs far more than the
    message, so it is built after the message has gone out. So is the picture (`draw_picture`).
    """

    text: str
    blocks: tuple[Block, ...]
    write_full_text: Callable[[], Iterable[str]] | None = None  # the pieces of the full text, in order
    draw_picture: Callable[[], Picture | None] | None = None  # drawn after the message has gone out

    @property
    def cut(self) -> bool:
        return self.write_full_text is not None

    @property
    def full_text(self) -> str | None:
        return "".join(self.write_full_text()) if self.write_full_text else None


def message(text: str, blocks: Iterable[Block], full_text: Callable[[], Iterable[str]] | None = None) -> SlackMessage:
    """`text` is plain words (the notification), escaped here: it is the one place it leaves."""
    return SlackMessage(escape(clip(text, FALLBACK_CHARS)), tuple(blocks), full_text)


def headed(msg: SlackMessage, words: str) -> SlackMessage:
    """`msg` with plain words put before its notification text, escaped as `message` escapes it."""
    return replace(msg, text=clip(f"{escape(words)} · {msg.text}", FALLBACK_CHARS))


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Bidirectional embeddings, overrides and isolates: one in a deploy id would turn the host shown
# after it (`r-1 (ci.example.com)`) around on screen. C0/C1 controls but tab and line ends, and DEL.
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
REPLACEMENT = "\ufffd"


def visible(text: str) -> str:
    """`text` with every bidi control and control character replaced, one for one."""
    return _INVISIBLE.sub(REPLACEMENT, text)


def escape(text: str) -> str:
    """Slack reads `&`, `<` and `>` as control characters in mrkdwn, even inside code."""
    return visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(mrkdwn: str) -> str:
    """What `escape` made of plain words, read back (the notification text, to title a file)."""
    return mrkdwn.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def plain(text: str, limit: int) -> str:
    """Words for a Block Kit `plain_text` object: Slack shows them as written (no mentions, no
    links, no entities), so they are not escaped; only what would reorder or hide text goes."""
    return clip(visible(text), limit)


def file_title(text: str, limit: int = 120) -> str:
    """A file's title or alt text. Slack documents no formatting for them, so nothing there may be
    able to read as a control sequence: `<` and `>` become look-alike angle quotes."""
    return plain(text, limit).replace("<", "\u2039").replace(">", "\u203a")


# A link exactly as `link` builds it: an http(s) URL with no `<`, `>`, `|` or space, then a label
# with no `<` or `>`. Every other `<` in mrkdwn is a control sequence (`<!channel>`, `<@U1>`) the
# bot never means, so `guard` escapes it: the last line, behind the escaping of each piece.
_BUILT_LINK = re.compile(r"<https?://[^\s<>|]+\|[^<>]*>")


def guard(mrkdwn: str) -> str:
    """Every `<` that does not open a link the renderer built, escaped; applied by `section` and
    `context`, so a piece of source text that missed `escape` still cannot ping or disguise."""
    out, at = [], 0
    mrkdwn = visible(mrkdwn)
    for found in _BUILT_LINK.finditer(mrkdwn):
        out += [mrkdwn[at : found.start()].replace("<", "&lt;"), found.group()]
        at = found.end()
    out.append(mrkdwn[at:].replace("<", "&lt;"))
    return "".join(out)


def code(text: str) -> str:
    return "`" + escape(text.replace("`", "'")) + "`"


def name(ref: str) -> str:
    """An entity as people say it, cut to a length that keeps one entry well inside a section."""
    return clip(short_name(ref), NAME_CHARS)


def names(refs: Sequence[str], shown: int = 5) -> str:
    head = ", ".join(name(r) for r in refs[:shown])
    return head if len(refs) <= shown else f"{head} and {len(refs) - shown} more"


def cited(edge: EdgeFacts) -> str:
    """`cite_edge`, naming at most SOURCES_SHOWN sources (the weight still counts them all)."""
    sources = edge.sources
    if len(sources) <= SOURCES_SHOWN:
        return clip(cite_edge(edge), CITE_CHARS)
    kept = tuple(c for c in edge.citations if c.locator in sources[:SOURCES_SHOWN])
    head, _, weight = cite_edge(replace(edge, citations=kept)).rpartition("] x")
    return clip(f"{head}, +{len(sources) - SOURCES_SHOWN} more] x{weight}", CITE_CHARS)


def safe_url(url: str) -> str | None:
    """`url` fit to sit inside `<...|...>`, or None: parsed (not prefix-matched) as http(s) with a
    host that can be shown (`link_host`), no whitespace or control characters; `|`, `<`, `>`
    percent-encoded, `&` escaped."""
    if any(ch.isspace() or unicodedata.category(ch)[0] == "C" for ch in url):
        return None
    try:
        scheme = urlsplit(url).scheme
    except ValueError:
        return None
    if scheme.lower() not in ("http", "https") or not link_host(url):
        return None
    encoded = url.replace("|", "%7C").replace("<", "%3C").replace(">", "%3E")
    return encoded.replace("&", "&amp;")


# What a link's target host may be shown as: letters, digits, dots, hyphens (an IPv6 address's
# colons). A host in another script is shown as its IDNA (punycode) form, as browsers show a
# homograph, so `ci.exаmple.com` with a Cyrillic `а` never reads as `ci.example.com`.
_SHOWN_HOST = re.compile(r"[a-z0-9_.-]+|[0-9a-f:.]+")


def link_host(url: str) -> str:
    """The host a link goes to, as shown beside or instead of its label; "" when there is none fit
    to show (no host, or one that is not a host name even in IDNA form)."""
    try:
        host = urlsplit(url).hostname or ""
        shown = host if host.isascii() else host.encode("idna").decode("ascii")
    except (ValueError, UnicodeError):
        return ""
    return shown if _SHOWN_HOST.fullmatch(shown) else ""


# Text a reader takes for a host: two or more dotted labels, the last starting with a letter
# (after NFKC, so fullwidth letters and dots count; the ideographic full stop is a dot in an
# address bar too), four dotted numbers, or whatever follows a `://`. Runs are found first and
# split after, so no pattern backtracks over a long label.
_RUN = re.compile(r"[\w.-]+")
_LEADING_DIGITS = re.compile(r"\d+")
# Four dotted numbers anywhere, glued to what comes before too (`b10.0.0.7`, `example.com10.0.0.7`).
_ADDRESS = re.compile(r"\d+\.\d+\.\d+\.\d+")
_AUTHORITY = re.compile(r"[^/\s?#\\]*")


def named_hosts(label: str) -> set[str]:
    """Every host a reader could take `label` to name, lower-case; invisible format characters
    (zero-width joiners and the like) are dropped first, as a reader never sees them."""
    seen = unicodedata.normalize("NFKC", label).replace("\u3002", ".")
    text = "".join(ch for ch in seen if unicodedata.category(ch) != "Cf").casefold()
    hosts = {host for run in _RUN.findall(text) for host in _dotted_hosts(run)}
    hosts.update(_ADDRESS.findall(text))
    for after in text.split("://")[1:]:
        authority = _AUTHORITY.match(after)
        host = authority.group().rpartition("@")[2] if authority else ""
        host = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
        if host:
            hosts.add(host)
    return hosts


def _dotted_hosts(run: str) -> list[str]:
    hosts, labels = [], []
    for part in [*run.split("."), ""]:  # an empty label ends a group, as two dots in a row do
        if part:
            labels.append(part)
            continue
        # Four dotted numbers read as an address even with more after them (`10.0.0.7A`, `10.0.0.7.1`).
        numeric = len(labels) >= 4 and all(x.isdigit() for x in labels[:3]) and labels[3][:1].isdigit()
        last = labels[-1] if labels else ""
        if numeric:
            hosts.append(".".join([*labels[:3], _LEADING_DIGITS.match(labels[3]).group()]))  # type: ignore[union-attr]
        elif len(labels) >= 2 and len(last) >= 2 and last[0].isalpha():
            hosts.append(".".join(labels))
        labels = []
    return hosts


def disguises(label: str, host: str) -> bool:
    """Whether `label` reads as a host (or URL) other than `host`, the link's own: any host named
    in a link to an IDNA (non-ASCII) host does, since the two would read alike."""
    named = named_hosts(label)
    return bool(named) and (named != {host} or host.startswith("xn--") or ".xn--" in host)


def link(url: str, label: str) -> str:
    """A mrkdwn link for http(s) URLs; anything else is shown as plain text, never made clickable.

    A label that reads as another host or URL than the link's never labels it: the label is shown
    as plain text and the link, beside it, is labelled by the host it goes to."""
    safe = safe_url(url)
    if safe is None:
        return escape(label)
    host = link_host(url)
    if disguises(label, host):
        return f"{escape(label)} (<{safe}|{host}>)"
    return f"<{safe}|{escape(label).replace('|', '/')}>"


def labelled_link(url: str, label: str) -> str:
    """A link labelled by what it is (an id) and where it goes: `r-42 (ci.example.com)`."""
    built = link(url, label)
    if safe_url(url) is None or disguises(label, link_host(url)):
        return built  # plain text, or already shown with the host it goes to
    return f"{built} ({link_host(url)})"


def source_links(edge: EdgeFacts) -> str:
    """Links to where the edge's sources open, each named by what it is (`PagerDuty`, the cited
    file's name), never by its URL; "" when none opens anywhere."""
    return " ".join(link(c.url, c.label) for c in cited_sources(edge)[:SOURCES_SHOWN] if safe_url(c.url))


SOURCES_CARDED = 10  # sources on an answer's card: Slack documents no limit, a reader wants few
SOURCES_SCANNED = 500  # edges looked through for them: an answer's first, never the whole graph's
CARD_CHARS = 1200  # the text a card's sources may take, kept out of the answer's room


def source_text(cited: CitedSource) -> str:
    """A task card source's text: what the source is, or the host it goes to where that name reads
    as another host (`payments.yaml` does: the card has no room for a label beside the link)."""
    host = link_host(cited.url)
    label = file_title(cited.label, NAME_CHARS)
    return host if disguises(label, host) else label


def sources_card(edges: Iterable[EdgeFacts], task_id: str, first: Iterable[CitedSource] = ()) -> list[Block]:
    """The answer's sources that open somewhere (`first`, then the edges'; at most SOURCES_CARDED,
    each URL once) as the `sources` of one task card; none when no source opens anywhere."""
    sources, seen = [], set()
    for cited in itertools.chain(first, opened(itertools.islice(edges, SOURCES_SCANNED))):
        if cited.url in seen:
            continue
        seen.add(cited.url)
        if safe_url(cited.url) is not None:
            sources.append({"type": "url", "url": cited.url, "text": source_text(cited)})
        if len(sources) == SOURCES_CARDED:
            break
    if not sources:
        return []
    card = {"type": "task_card", "task_id": task_id, "title": "Sources", "status": "complete", "sources": sources}
    return [card]


# Slack's table block: 100 rows (a header row counts), 20 cells a row, one table a message.
TABLE_ROWS = 100
TABLE_CELL_CHARS = 200  # a cell is a name or a short list: kept well inside the message's text budget


def cell(text: str) -> Block:
    """A table cell: plain text, never read as mrkdwn; like a file title, nothing in it may read as
    a control sequence either (`<`, `>` become look-alike angle quotes)."""
    return {"type": "raw_text", "text": file_title(text, TABLE_CELL_CHARS) or "-"}


# A message's blocks as JSON: past about 13k Slack refuses a post with `msg_blocks_too_long`, and a
# table's cells count there with their JSON (30 characters a cell before its text), unlike the text
# of a section. Tables are fitted under it, with the rest of the message and its sources card.
BLOCKS_JSON_BUDGET = 12_500
CARD_JSON = 1_600  # a sources card: ten URLs and their names


def json_length(blocks: Iterable[Block]) -> int:
    return sum(len(json.dumps(block, ensure_ascii=False)) for block in blocks)


def table(
    head: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] = (), *, room: int
) -> tuple[list[Block], int]:
    """(one table block, or none, and how many rows it holds): a header row, then the rows that fit
    in `room` characters of block JSON and Slack's 100 rows; `align` per column."""
    built: list[list[Block]] = [[cell(text) for text in head]]
    used = json_length([{"type": "table", "rows": built}]) + 80 * bool(align)
    for row in rows[: TABLE_ROWS - 1]:
        cells = [cell(text) for text in row]
        used += len(json.dumps(cells, ensure_ascii=False)) + 1
        if used > room:
            break
        built.append(cells)
    if len(built) == 1:
        return [], 0
    block: Block = {"type": "table", "rows": built}
    if align:
        block["column_settings"] = [{"align": a} for a in align]
    return [block], len(built) - 1


def header(text: str) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": plain(text, HEADER_CHARS), "emoji": True}}


def section(mrkdwn: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": guard(clip(mrkdwn, SECTION_CHARS))}}


def context(mrkdwn: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": guard(clip(mrkdwn, SECTION_CHARS))}]}


def divider() -> Block:
    return {"type": "divider"}


def button(text: str, action_id: str, value: Mapping[str, object]) -> Block | None:
    """A button whose value carries a command to re-run; None when that value would not fit."""
    encoded = json.dumps(dict(value), separators=(",", ":"))
    if len(encoded) > VALUE_CHARS:
        return None
    label = {"type": "plain_text", "text": plain(text, BUTTON_CHARS), "emoji": True}
    return {"type": "button", "text": label, "action_id": action_id, "value": encoded}


def actions(buttons: Iterable[Block | None]) -> list[Block]:
    elements = [b for b in buttons if b is not None][:MAX_BUTTONS]
    return [{"type": "actions", "elements": elements}] if elements else []


def share_button(value: Mapping[str, object]) -> list[Block]:
    return actions([button("Share in channel", "share_answer", value)])


def text_length(blocks: Iterable[Block]) -> int:
    """Characters of text in the blocks: what Slack's cumulative limit counts."""
    return sum(_text_in(block) for block in blocks)


def _text_in(value: object) -> int:
    if isinstance(value, dict):
        return sum(len(v) if k == "text" and isinstance(v, str) else _text_in(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_text_in(v) for v in value)
    return 0


def fit(entries: Sequence[str], budget: int) -> int:
    """How many entries, from the first, fit in `budget` characters (each joined by a newline)."""
    used = 0
    for count, entry in enumerate(entries):
        used += len(entry) + 1
        if used > budget:
            return count
    return len(entries)


def pack(entries: Iterable[str], *, fence: str = "") -> list[Block]:
    """Entries (each shorter than a section) packed into as few sections as fit; `fence` wraps each
    section's text (three backticks for a code block)."""
    room = SECTION_CHARS - 2 * (len(fence) + 1)
    blocks: list[Block] = []
    chunk: list[str] = []
    size = 0
    for entry in entries:
        entry = clip(entry, room)
        if chunk and size + len(entry) + 1 > room:
            blocks.append(_fenced(chunk, fence))
            chunk, size = [], 0
        chunk.append(entry)
        size += len(entry) + 1
    if chunk:
        blocks.append(_fenced(chunk, fence))
    return blocks


def _fenced(lines: list[str], fence: str) -> Block:
    body = "\n".join(lines)
    return section(f"{fence}\n{body}\n{fence}" if fence else body)

"""Runbook text: the prose of a Markdown, reStructuredText or plain-text document, cut into sentences.

Code, comments, tables and front matter are skipped, inline markup is removed and each sentence keeps
the number of the line it starts on, so an extracted relation can cite `file:line`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from graph.facts import Problem

Line = tuple[int, str]  # (1-based line number, text with markup removed)


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A heading, paragraph or list item: its source lines, markup removed."""

    item: bool
    lines: tuple[Line, ...]


# --- document structure ------------------------------------------------------------------------------
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_FENCE = re.compile(r"\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"#{1,6}(?:\s+(.*?))??(?:\s+#+)?\s*")
_RULE = re.compile(r"([=\-~^\"'`#*+_:.])(?:\s*\1){2,}")  # hr, setext or rst heading underline
_ITEM = re.compile(r"(?:[-*+•]|#\.|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_LINK_DEFINITION = re.compile(r"\[[^\]]+\]:\s")
_ADMONITION = re.compile(r"\.\.\s+(?:note|warning|important|tip|hint|attention|caution|danger|seealso)::\s*(.*)", re.I)
# A line that ends with one of these cannot end a sentence, so the next line continues it.
_CONNECTIVE = re.compile(
    r"(?:[,;:(/&-]|\b(?:the|a|an|and|or|of|on|by|to|from|for|with|in|at|as|via|is|are|both|depends|"
    r"relies|calls|uses|owns|runs|reads|writes|publishes))$",
    re.I,
)

# --- inline markup -----------------------------------------------------------------------------------
_CODE_SPAN = re.compile(r"(`{1,3})([^`]+)\1")
_RST_ROLE = re.compile(r":[\w:+-]+:(?=`)")
_RST_LINK = re.compile(r"`([^`<]+?)\s*<[^>`]*>`_{1,2}")
# Bounded repeats keep a long line full of unmatched markers linear rather than quadratic.
_INLINE = (
    (re.compile(r"~~.{1,300}?~~"), ""),  # struck-through text is no longer true
    (re.compile(r"!\[[^\]]{0,300}\]\([^()\s]{0,500}\)"), ""),
    (re.compile(r"\[([^\]]{1,300})\]\((?:[^()\s]|\([^()\s]{0,100}\)){0,500}(?:\s+\"[^\"]{0,200}\")?\)"), r"\1"),
    (re.compile(r"\[([^\]]{1,300})\]\[[^\]]{0,100}\]"), r"\1"),
    (re.compile(r"</?[A-Za-z][^<>]{0,300}>"), ""),
    (re.compile(r"(\*\*|__)(?=\S)(.{1,300}?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=\S)(.{1,300}?)(?<=\S)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<!\w)_(?=\S)(.{1,300}?)(?<=\S)_(?!\w)"), r"\1"),
)

# --- sentences ---------------------------------------------------------------------------------------
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*\s+(?=[\"'“‘(\[]*[A-Z])")
_ABBREVIATIONS = frozenset(
    {"e.g.", "i.e.", "eg.", "ie.", "cf.", "vs.", "approx.", "incl.", "esp.", "viz.", "resp.", "no.", "fig.", "al."}
    | {"mr.", "mrs.", "ms.", "dr.", "st."}
)


def split_paragraphs(name: str, text: str) -> tuple[tuple[Paragraph, ...], tuple[Problem, ...]]:
    """The prose of `text` in document order, and a Problem (cited `name:line`) per unclosed fence or comment."""
    scanner = _Scanner(name)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = front_matter_end(lines)
    for number, raw in enumerate(lines[start:], start + 1):
        scanner.feed(number, raw)
    return scanner.finish()


def split_sentences(lines: Sequence[Line]) -> list[Line]:
    """The sentences of one paragraph, each with the line it starts on; a sentence may span lines."""
    lines = [(number, text) for number, text in lines if text]
    starts, offset = [], 0
    for _, text in lines:
        starts.append(offset)
        offset += len(text) + 1
    joined = " ".join(text for _, text in lines)
    cuts = [0]
    for boundary in _BOUNDARY.finditer(joined):
        word = joined[: boundary.start() + 1].rsplit(None, 1)[-1].lstrip("([\"'“‘").lower()
        if word not in _ABBREVIATIONS:
            cuts.append(boundary.end())
    cuts.append(len(joined))
    out = []
    for begin, end in zip(cuts, cuts[1:], strict=False):
        sentence = joined[begin:end].strip()
        if sentence:
            out.append((lines[bisect_right(starts, begin) - 1][0], sentence))
    return out


def front_matter_end(lines: list[str]) -> int:
    if lines and lines[0].strip() == "---":
        for index, line in enumerate(lines[1:], 1):
            if line.strip() in ("---", "..."):
                return index + 1
    return 0


class _Scanner:
    """Cuts a document into headings, paragraphs and list items; skips code, comments and tables."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._paragraphs: list[tuple[bool, list[Line]]] = []
        self._lines: list[Line] = []  # the last paragraph's, which a continuation line joins
        self._open = False  # the last paragraph may take a continuation line
        self._in_list = False
        self._fence: tuple[str, int] | None = None  # closing marker, line it opened on
        self._literal: int | None = None  # indentation above which an rst literal/directive block goes on
        self._comment: int | None = None  # line an HTML comment opened on

    def feed(self, number: int, raw: str) -> None:
        line = self._uncomment(number, raw)
        if line is None:
            return
        line = _QUOTE.sub("", line).expandtabs(4)
        if self._in_code(number, line):
            return
        text, indent = line.strip(), len(line) - len(line.lstrip())
        title = _HEADING.fullmatch(text) or _ADMONITION.fullmatch(text)
        item = _ITEM.match(text)
        if not text or _RULE.fullmatch(text) or text.startswith("|") or _LINK_DEFINITION.match(text):
            self._open = False
        elif title:
            self._start(number, title.group(1) or "", item=False)
            self._open = text.startswith("..")  # an admonition's body follows, indented
        elif item:
            self._start(number, text[item.end() :], item=True)
            self._in_list = True
        elif self._open and _continues(self._lines[-1][1], text):
            self._lines.append((number, clean_inline(text)))
        else:
            self._start(number, text, item=False)
            self._in_list = self._in_list and indent >= 2
        if text.endswith("::") and not text.startswith(".."):
            self._literal, self._open = indent, False

    def finish(self) -> tuple[tuple[Paragraph, ...], tuple[Problem, ...]]:
        problems = []
        if self._fence:
            where = f"{self.name}:{self._fence[1]}"
            problems.append(Problem(where, "code fence is never closed; the rest of the file was skipped", "code"))
        if self._comment:
            where = f"{self.name}:{self._comment}"
            problems.append(Problem(where, "HTML comment is never closed; the rest of the file was skipped", "comment"))
        paragraphs = tuple(Paragraph(item, tuple(lines)) for item, lines in self._paragraphs)
        return paragraphs, tuple(problems)

    def _start(self, number: int, text: str, *, item: bool) -> None:
        self._lines = [(number, clean_inline(text))]
        self._paragraphs.append((item, self._lines))
        self._open = True

    def _uncomment(self, number: int, raw: str) -> str | None:
        if self._comment is not None:
            end = raw.find("-->")
            if end < 0:
                return None
            self._comment, raw = None, raw[end + 3 :]
        kept, position = [], 0
        while (begin := raw.find("<!--", position)) >= 0:
            kept.append(raw[position:begin])
            end = raw.find("-->", begin + 4)
            if end < 0:
                self._comment = number
                return "".join(kept)
            position = end + 3
        kept.append(raw[position:])
        return "".join(kept)

    def _in_code(self, number: int, line: str) -> bool:
        text = line.strip()
        if self._fence is not None:
            marker = self._fence[0]
            if text.startswith(marker) and not text.strip(marker[0]):
                self._fence = None
            return True
        if self._literal is not None:
            if not text or len(line) - len(line.lstrip()) > self._literal:
                return True
            self._literal = None
        fence = _FENCE.match(line)
        if fence or (text.startswith(".. ") and not _ADMONITION.fullmatch(text)):
            self._fence = (fence.group(1), number) if fence else None
            self._literal = None if fence else len(line) - len(line.lstrip())
            self._open = False
            return True
        # An indented block after a blank line is code, unless it continues a list item.
        return bool(text) and not self._open and not self._in_list and line.startswith("    ")


def _continues(previous: str, text: str) -> bool:
    """Whether a line carries on the paragraph above rather than starting a new statement."""
    if not text[0].isupper() or not previous or previous[-1] in ".!?" or _CONNECTIVE.search(previous):
        return True
    return len(text.split()) < 3  # a short capitalised tail ("Team.") finishes a wrapped name


def clean_inline(line: str) -> str:
    line = _RST_LINK.sub(r"\1", _RST_ROLE.sub("", line))
    parts, last = [], 0
    # Code spans are kept verbatim: `redis_main` must not lose its underscore to the emphasis rules.
    for span in _CODE_SPAN.finditer(line):
        parts += [_unmark(line[last : span.start()]), span.group(2).strip()]
        last = span.end()
    parts.append(_unmark(line[last:]))
    return " ".join("".join(parts).split())


def _unmark(text: str) -> str:
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text

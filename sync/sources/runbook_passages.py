"""Runbook passages: a document cut into paragraphs and list blocks under their headings, to quote.

A passage is one paragraph, list or table under the nearest heading, with the code that follows
it; it is cited by that heading (`runbooks/redis.md §Failover`), or by line where the document
has none (plain text). Headings are Markdown ATX (`#`..`######`) and setext (`===`/`---`
underlines), or reStructuredText underlines and overlines. Code is kept fenced with ``` in the
passage text, whatever its markup was (fence, indented block, rst literal), and never split: a
`#` line inside a fence is not a heading, a blank line inside it does not end a passage. Which
entities a passage names is the build's job, not this module's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graph.facts import Passage
from sync.sources.runbook_text import clean_inline, front_matter_end

MAX_CHARS = 1_200  # per passage: enough for a runbook step list, small enough to quote or prompt with
FENCE = "```"
MARKDOWN = (".md", ".markdown")
RST = (".rst",)

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_RULE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_RST_ADORNMENT = re.compile(r"([=\-~^\"'`#*+_:.!$%&,;/<>?@\\|])\1{2,}\s*")
_ITEM = re.compile(r"\s{0,3}(?:[-*+•]|#\.|\d{1,9}[.)])\s+")
_RST_ADMONITION = re.compile(r"\.\.\s+(?:note|warning|important|tip|hint|attention|caution|danger|seealso)::", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class _Block:
    """Lines of one passage-to-be, and the section it stands in."""

    section: int  # index into the document's sections
    lines: list[tuple[int, str]] = field(default_factory=list)
    item: bool = False  # a list block: blank lines between items do not end it
    code: bool = False  # only code so far: joins the prose block before it


@dataclass(frozen=True, slots=True)
class _Section:
    title: str
    path: tuple[str, ...]
    locator: str  # "" before the first heading: passages there are cited by line


def split_passages(source: str, name: str, text: str) -> tuple[Passage, ...]:
    """The passages of one document, in document order; `name` is what citations call the file."""
    dialect = "markdown" if name.lower().endswith(MARKDOWN) else "rst" if name.lower().endswith(RST) else "text"
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    splitter = _Splitter(name, dialect)
    start = front_matter_end(lines) if dialect == "markdown" else 0
    for number, raw in enumerate(lines[start:], start + 1):
        splitter.feed(number, raw)
    return splitter.finish(source)


class _Splitter:
    """Feeds lines one by one; cuts blocks at blank lines, headings and rules, never inside code."""

    def __init__(self, name: str, dialect: str) -> None:
        self.name, self.dialect = name, dialect
        self.sections: list[_Section] = [_Section("", (), "")]
        self.blocks: list[_Block] = []
        self._block: _Block | None = None
        self._blank = True  # a blank line (or the start) since the last line of the current block
        self._fence: str | None = None  # the closing marker of the open fence
        self._literal: int | None = None  # code goes on while lines are indented deeper than this
        self._literal_open = False  # the fence of that code is written (its first line came)
        self._comment = False  # inside an HTML comment
        self._levels: dict[tuple[str, bool], int] = {}  # rst: adornment style -> level, by first use
        self._stack: list[tuple[int, str]] = []  # (level, title) of the open headings
        self._seen: dict[str, int] = {}  # heading title (case-folded) -> times seen
        self._overline: str | None = None  # rst: the adornment line just before the current block

    # --- lines ------------------------------------------------------------------------------
    def feed(self, number: int, raw: str) -> None:
        line = (raw if self._fence is not None else self._uncomment(raw)).rstrip().expandtabs(4)
        if not line and raw.strip():
            return  # a comment line is no line at all, not a blank one
        if self._fence is not None:
            self._add(number, line)
            if line.strip().startswith(self._fence) and not line.strip().strip(self._fence[0]):
                self._fence = None
            return
        if self._literal is not None:
            if not line.strip() or _indent(line) > self._literal:
                self._add_code(number, line)
                return
            self._close_literal()
        if not line.strip():
            self._blank = True
            return
        if self.dialect != "text" and self._heading(line):
            return
        if self.dialect == "markdown" and (fence := _FENCE_OPEN.match(line)):
            self._fence = fence.group(1)
            self._start_code(number, line)
            return
        if self.dialect == "markdown" and _RULE.fullmatch(line):
            self._end()
            return
        if self.dialect == "markdown" and self._blank and _indent(line) >= 4 and not self._in_list():
            self._literal, self._literal_open = 3, False  # an indented code block, while lines stay indented
            self._add_code(number, line)
            return
        self._prose(number, line)

    def _prose(self, number: int, line: str) -> None:
        item = bool(_ITEM.match(line))
        block = self._block
        continues = block is not None and not block.code and (not self._blank or (block.item and self._fits_list(line)))
        if not continues:
            self._end()
            self._block = _Block(len(self.sections) - 1, item=item)
        assert self._block is not None
        self._block.item = self._block.item or item
        self._add(number, line)
        if len(self._block.lines) > 1:
            self._overline = None  # more than one line: not a title under an overline
        if self.dialect == "rst" and line.endswith("::") and not _RST_ADMONITION.match(line.strip()):
            self._literal, self._literal_open = _indent(line), False

    def _fits_list(self, line: str) -> bool:
        return bool(_ITEM.match(line)) or _indent(line) >= 2

    def _in_list(self) -> bool:
        return self._block is not None and self._block.item

    # --- headings ---------------------------------------------------------------------------
    def _heading(self, line: str) -> bool:
        if self.dialect == "markdown" and (atx := _ATX.fullmatch(line)):
            self._end()
            self._open_section(len(atx.group(1)), atx.group(2) or "")
            return True
        block = self._block
        single = block is not None and not block.code and not block.item and len(block.lines) == 1 and not self._blank
        if self.dialect == "markdown" and single and (setext := _SETEXT.fullmatch(line)):
            assert block is not None
            self._drop_current()
            self._open_section(1 if setext.group(1)[0] == "=" else 2, block.lines[0][1])
            return True
        if self.dialect == "rst" and _RST_ADORNMENT.fullmatch(line.strip()):
            char = line.strip()[0]
            if single:
                assert block is not None
                style = (char, self._overline == char)
                self._drop_current()
                level = self._levels.setdefault(style, len(self._levels) + 1)
                self._open_section(level, block.lines[0][1])
                self._overline = None
            else:
                self._end()
                self._overline = char  # an overline, or a transition: either way it ends the block
            return True
        return False

    def _open_section(self, level: int, raw_title: str) -> None:
        title = clean_inline(raw_title.strip())
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, title))
        path = tuple(t for _, t in self._stack if t)
        locator = ""
        if title:
            seen = self._seen[title.casefold()] = self._seen.get(title.casefold(), 0) + 1
            # The same title twice in one document ("Symptoms" under two services): number the rest.
            locator = f"{self.name} §{title}" + (f" ({seen})" if seen > 1 else "")
        self.sections.append(_Section(title, path, locator))
        self._blank = True

    # --- blocks -----------------------------------------------------------------------------
    def _add(self, number: int, line: str) -> None:
        if self._block is None:
            self._block = _Block(len(self.sections) - 1)
        self._block.lines.append((number, line))
        self._blank = False

    def _start_code(self, number: int, opening: str) -> None:
        """Code joins the prose right above it in the same section ("Run:" and its command)."""
        block = self._block
        if block is None or block.section != len(self.sections) - 1:
            self._flush()
            block = self._block = _Block(len(self.sections) - 1, code=True)
        block.lines.append((number, opening.strip()))
        self._blank = False

    def _add_code(self, number: int, line: str) -> None:
        if not self._literal_open:
            if not line.strip():
                return  # the blank line after "::"
            self._start_code(number, FENCE)
            self._literal_open = True
        self._add(number, line)

    def _close_literal(self) -> None:
        block = self._block
        if self._literal_open and block is not None:
            while block.lines and not block.lines[-1][1].strip():
                block.lines.pop()
            block.lines.append((block.lines[-1][0], FENCE))
        self._literal, self._literal_open = None, False
        self._blank = True

    def _drop_current(self) -> None:
        self._block = None

    def _end(self) -> None:
        if self._literal is not None:
            self._close_literal()
        self._flush()

    def _flush(self) -> None:
        if self._block is not None and any(text.strip() for _, text in self._block.lines):
            self.blocks.append(self._block)
        self._block = None

    def _uncomment(self, raw: str) -> str:
        if self.dialect != "markdown":
            return raw
        kept: list[str] = []
        position = 0
        while True:
            if self._comment:
                end = raw.find("-->", position)
                if end < 0:
                    return "".join(kept)
                self._comment, position = False, end + 3
            begin = raw.find("<!--", position)
            if begin < 0:
                kept.append(raw[position:])
                return "".join(kept)
            kept.append(raw[position:begin])
            self._comment, position = True, begin + 4

    def finish(self, source: str) -> tuple[Passage, ...]:
        if self._fence is not None and self._block is not None:
            while not self._block.lines[-1][1].strip():
                self._block.lines.pop()
            self._block.lines.append((self._block.lines[-1][0], self._fence))  # an unclosed fence ends the file
        self._end()
        passages = []
        for block in self.blocks:
            section = self.sections[block.section]
            for chunk in _chunks(_dedent(block.lines)):
                line = chunk[0][0]
                locator = section.locator or f"{self.name}:{line}"
                text = _join(chunk)
                passages.append(Passage(source, locator, section.title, text, line, self.name, section.path))
        return tuple(passages)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _dedent(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    margin = min((_indent(text) for _, text in lines if text.strip()), default=0)
    return [(number, text[margin:]) for number, text in lines]


def _join(chunk: list[tuple[int, str]]) -> str:
    return "\n".join(text for _, text in chunk).strip("\n")


# --- bounded length ----------------------------------------------------------------------------
def _chunks(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """The block as one chunk when it fits MAX_CHARS, else cut where a sentence, item or code ends."""
    if len(_join(lines)) <= MAX_CHARS:
        return [lines]
    units = [piece for number, text in lines for piece in _pieces(number, text)]
    chunks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    size, fence, cut = 0, False, 0  # cut: the last place in `current` a chunk may end
    for number, text in units:
        if size + len(text) + 1 > MAX_CHARS - len(FENCE) - 1 and current:
            at = cut or len(current)
            head, current = current[:at], current[at:]
            if fence and at == len(head) and head is not current:
                head.append((head[-1][0], FENCE))
                current = [(number, FENCE), *current]
            chunks.append(head)
            size, cut = sum(len(t) + 1 for _, t in current), 0
        is_fence = text.lstrip().startswith(("```", "~~~"))
        if not fence and _ITEM.match(text) and current:
            cut = len(current)  # a new item may start a chunk
        current.append((number, text))
        size += len(text) + 1
        fence = fence != is_fence
        if not fence and (is_fence or text.rstrip().endswith((".", "!", "?", ":"))):
            cut = len(current)
    if current:
        chunks.append(current)
    return [c for c in chunks if any(t.strip() and t.strip() != FENCE for _, t in c)]


def _pieces(number: int, text: str) -> list[tuple[int, str]]:
    """A line longer than a chunk, as sentences; a sentence longer than a chunk is cut at a word."""
    limit = MAX_CHARS - len(FENCE) - 2
    if len(text) <= limit:
        return [(number, text)]
    pieces = []
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit - 1)
            cut = cut if cut > limit // 2 else limit - 1
            pieces.append((number, sentence[:cut].rstrip() + " …"))
            sentence = sentence[cut:].lstrip()
        pieces.append((number, sentence))
    return pieces

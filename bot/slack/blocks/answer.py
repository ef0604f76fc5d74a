"""A question's answer in Slack (mentions, and the same bundle everywhere): one section per ask per
entity — a bold heading naming both ("payments — depends on"), the graph's lines, then the cited edges
they rest on in a code block — so a reader sees at a glance that every ask was answered.

Inside Slack's limits by construction: each section's share of the message's text budget is what is
left divided by the sections still to come (a short section leaves its unused share to the next),
a section's lines and cited edges past its share end in "… and N more", sections past the block limit
end in "… and N more sections", and whenever anything was cut the whole answer is attached as text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.model.ports import Phrasing
from bot.render.freshness import Freshness
from bot.render.labels import labelled
from bot.slack.blocks.freshness import freshness_blocks, graph_age, stale_prefix
from bot.slack.blocks.kit import (
    CARD_CHARS,
    FALLBACK_CHARS,
    MAX_BLOCKS,
    SECTION_CHARS,
    TEXT_BUDGET,
    Block,
    SlackMessage,
    cited,
    clip,
    context,
    escape,
    fit,
    headed,
    message,
    pack,
    section,
    sources_card,
    text_length,
)
from graph.questions.ask import Answer, Section

LINE_CHARS = 600  # one line of a section: a long list of names is cut, never a whole section
TITLE_CHARS = 150
MORE_CHARS = 40  # room kept for "… and N more"
FENCE = "```"
SLACK_MARGIN = 200  # under TEXT_BUDGET, for the joins Slack counts and we do not


@dataclass(frozen=True, slots=True)
class _Shown:
    blocks: list[Block]
    cut: bool
    used: int  # characters of text


def format_answer(answer: Answer, freshness: Freshness, *, phrasing: Phrasing | None = None) -> SlackMessage:
    """The model's phrasing (marked) when it phrased, the notes, then each ask's section."""
    warning, footer = freshness_blocks(freshness)
    top = _phrased(phrasing) + pack([escape(clip(note, LINE_CHARS)) for note in answer.notes])
    fixed = [*warning, *top, footer]
    room = TEXT_BUDGET - text_length(fixed) - SLACK_MARGIN - CARD_CHARS
    slots = MAX_BLOCKS - len(fixed) - 2  # one kept for the "attached" note, one for the sources card
    body, cut = _sections(answer.sections, phrasing, room, slots)
    body += sources_card((e for part in answer.sections for e in part.edges), "answer-sources")
    cut = cut or (phrasing is not None and len(phrasing.text) > SECTION_CHARS - 100)
    cut = cut or any(len(note) > LINE_CHARS for note in answer.notes)
    if cut:
        edges = len(answer.edges)
        body.append(context(f"_… the full answer ({edges} cited edge{'s' if edges != 1 else ''}) is attached_"))
    full = (lambda: _full_text(answer, phrasing, freshness)) if cut else None
    first = clip(answer.sentences[0] if answer.sentences else "No answer.", FALLBACK_CHARS)
    blocks = [*warning, *top, *body, footer]
    if not answer.sections:
        return message(stale_prefix(freshness) + first, blocks, full)
    return headed(message(first, blocks, full), stale_prefix(freshness) + answer.sections[0].title)


def _phrased(phrasing: Phrasing | None) -> list[Block]:
    if phrasing is None:
        return []
    return [section(escape(clip(phrasing.text, SECTION_CHARS - 100))), context(escape(phrasing.marker))]


def _sections(
    sections: Sequence[Section], phrasing: Phrasing | None, room: int, slots: int
) -> tuple[list[Block], bool]:
    """The sections that fit in `slots` blocks (two each at most) and `room` characters."""
    shown = len(sections) if 2 * len(sections) <= slots else max((slots - 1) // 2, 1)
    blocks: list[Block] = []
    cut = False
    for i, part in enumerate(sections[:shown]):
        rendered = _section(part, phrasing, room // (shown - i))
        blocks += rendered.blocks
        room -= rendered.used
        cut = cut or rendered.cut
    if shown < len(sections):
        more = len(sections) - shown
        blocks.append(context(f"_… and {more} more section{'s' if more != 1 else ''}_"))
        cut = True
    return blocks, cut


def _section(part: Section, phrasing: Phrasing | None, share: int) -> _Shown:
    """The heading and lines in one section block, the cited edges in a code block under it."""
    heading = f"*{escape(clip(part.title, TITLE_CHARS))}*"
    lines = [escape(clip(line, LINE_CHARS)) for line in part.lines]
    cites = [escape(line) for line in labelled(part.edges, phrasing, cited)]
    cite_need = sum(len(c) + 1 for c in cites) + 2 * len(FENCE)
    line_room = min(SECTION_CHARS, max(share - min(cite_need, share // 2), share // 2)) - len(heading) - 1
    said, lines_cut = _fitted(lines, line_room, "")
    text = "\n".join([heading, *said])
    blocks = [section(text)]
    used = len(text)
    cut = lines_cut or any(len(line) > LINE_CHARS for line in part.lines)
    if cites:
        cite_room = min(SECTION_CHARS, share - used) - 2 * (len(FENCE) + 1)
        quoted, cites_cut = _fitted(cites, cite_room, " cited")
        if quoted:
            fenced = f"{FENCE}\n" + "\n".join(quoted) + f"\n{FENCE}"
            blocks.append(section(fenced))
            used += len(fenced)
        cut = cut or cites_cut
    return _Shown(blocks, cut, used)


def _fitted(entries: list[str], room: int, what: str) -> tuple[list[str], bool]:
    """The entries that fit in `room`, then "… and N more" when some did not; a first entry longer
    than the room is clipped to it rather than dropped (a section always says something)."""
    count = fit(entries, room)
    if count == len(entries):
        return entries, False
    count = fit(entries, room - MORE_CHARS)
    kept = entries[:count] or ([clip(entries[0], room - MORE_CHARS)] if room > 2 * MORE_CHARS else [])
    more = len(entries) - len(kept)
    return [*kept, f"… and {more} more{what}"] if more else kept, True


def _full_text(answer: Answer, phrasing: Phrasing | None, freshness: Freshness) -> Iterator[str]:
    """The whole answer as plain text, section by section, for the attachment."""
    if phrasing is not None:
        yield f"{phrasing.text}\n({phrasing.marker})\n\n"
    for note in answer.notes:
        yield f"{note}\n"
    for part in answer.sections:
        yield f"\n{part.title}\n"
        for line in part.lines:
            yield f"  {line}\n"
        for line in labelled(part.edges, phrasing):
            yield f"    {line}\n"
    yield f"\n{graph_age(freshness)}\n"

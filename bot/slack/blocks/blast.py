"""/blast-radius as Block Kit: counts, impacted entities by hops with owners and cited paths, survivors.

Only the first screen's paths are built (`BlastRadius.nearest`); the whole answer is walked only
when it does not fit and goes into `full_text`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.render.freshness import Freshness
from bot.render.wording import plural
from bot.slack.blocks.freshness import freshness_blocks, graph_age, stale_prefix
from bot.slack.blocks.kit import (
    TEXT_BUDGET,
    Block,
    SlackMessage,
    cited,
    code,
    escape,
    fit,
    header,
    message,
    name,
    names,
    pack,
    section,
    share_button,
    text_length,
)
from bot.slack.blocks.passages import passages_blocks, passages_plain
from graph.blast import BREAKS, BlastRadius, Impact
from graph.citations import cite_edge
from graph.drift import DEPENDENTS, nothing_found
from graph.naming.refs import short_name
from graph.passages import CitedPassage

FIRST_SCREEN = 60  # more than ever fit: the budget decides how many are shown
SURVIVORS_SHOWN = 15
SYSTEMS_SHOWN = 8
EDGES_SHOWN = 4
OWNERS_SHOWN = 5
RESERVE = 150  # the "and N more" line


@dataclass(frozen=True, slots=True)
class _Counts:
    breaks: int
    degrades: int
    systems: int
    hidden: int
    visible: int

    @classmethod
    def of(cls, result: BlastRadius) -> _Counts:
        hidden = result.hidden_count
        breaks, degrades = result.breaks_count, result.degrades_count
        return cls(breaks, degrades, len(result.systems), hidden, breaks + degrades - hidden)

    def summary(self) -> str:
        text = f"{self.breaks} break · {self.degrades} degrade · {plural(self.systems, 'system')} impacted"
        return text + (f" · {self.hidden} hidden here" if self.hidden else "")


def format_blast_radius(
    result: BlastRadius,
    freshness: Freshness,
    *,
    shared: bool = False,
    passages: Sequence[CitedPassage] = (),
) -> SlackMessage:
    """What breaks if the entity fails, within Slack's limits; `full_text` holds all of it when cut.

    `passages` are runbook passages to quote (chosen for this viewer), shown above the footer."""
    counts = _Counts.of(result)
    warning, footer = freshness_blocks(freshness)
    head = [header(f"Blast radius: {short_name(result.failed)}"), *warning, section(_counts_text(result, counts))]
    tail = [section(_survivors_text(result)), *passages_blocks(passages), footer]
    if not shared:
        tail += share_button(_share_value(result))
    room = TEXT_BUDGET - text_length(head + tail) - RESERVE
    impacts = result.nearest(FIRST_SCREEN)
    lines, shown = impact_lines(impacts, room)
    more = counts.visible - shown
    if more > 0:
        lines.append(f"_… and {plural(more, 'more impacted entity', 'more impacted entities')} (full list attached)_")
    body = pack(lines) if lines else [section(_nothing(result, counts))]
    cut = more > 0 or len(result.systems) > SYSTEMS_SHOWN or _elided(impacts[:shown])
    text = f"{stale_prefix(freshness)}If {short_name(result.failed)} goes down: {counts.summary()}"
    full = (lambda: blast_lines(result, freshness, passages)) if cut else None
    return message(text, head + body + tail, full)


def _nothing(result: BlastRadius, counts: _Counts) -> str:
    if counts.hidden:
        return "Only entities hidden from this channel depend on it."
    return escape(nothing_found(result.failed, DEPENDENTS, result.coverage))


def _elided(impacts: tuple[Impact, ...]) -> bool:
    return any(len(i.edges) > EDGES_SHOWN for i in impacts)


def _counts_text(result: BlastRadius, counts: _Counts) -> str:
    text = f"*If {escape(name(result.failed))} goes down*: {counts.summary()}"
    if result.max_depth is not None:
        text += f" _(walk limited to {plural(result.max_depth, 'hop')})_"
    systems = result.systems
    if systems:
        listed = ", ".join(f"{escape(name(s.entity))} {s.impacted}/{s.total}" for s in systems[:SYSTEMS_SHOWN])
        more = f" and {len(systems) - SYSTEMS_SHOWN} more" if len(systems) > SYSTEMS_SHOWN else ""
        text += f"\n*Systems*: {listed}{more}"
    return text


def _survivors_text(result: BlastRadius) -> str:
    survivors = result.survives
    if not survivors:
        return "*Survives*: nothing else in the graph"
    return f"*Survives* ({len(survivors)}): {escape(names(survivors, SURVIVORS_SHOWN))}"


def _share_value(result: BlastRadius) -> dict[str, object]:
    value: dict[str, object] = {"cmd": "blast-radius", "name": result.failed}
    if result.max_depth is not None:
        value["depth"] = result.max_depth
    return value


def impact_lines(impacts: tuple[Impact, ...], room: int) -> tuple[list[str], int]:
    """(mrkdwn entries, a heading opening each hop, how many fit in `room`), nearest first."""
    entries = []
    for i, impact in enumerate(impacts):
        heading = f"*{plural(impact.hops, 'hop')}*\n" if i == 0 or impacts[i - 1].hops != impact.hops else ""
        entries.append(heading + impact_entry(impact))
    shown = fit(entries, room)
    return entries[:shown], shown


def impact_entry(impact: Impact, *, edges_shown: int = EDGES_SHOWN) -> str:
    mark = "✗" if impact.impact == BREAKS else "~"
    owners = escape(names(impact.owners, OWNERS_SHOWN)) or "_none known_"
    lines = [f"{mark} *{escape(name(impact.entity))}* {impact.impact} · owners: {owners}"]
    # Read from the impacted entity back to the failure, as people ask "why does this break?".
    edges = [f"      {code(cited(e))}" for e in reversed(impact.edges)]
    if len(edges) > edges_shown:
        front = (edges_shown + 1) // 2
        back = len(edges) - (edges_shown - front)
        edges = [*edges[:front], f"      _… {plural(back - front, 'more hop')} …_", *edges[back:]]
    lines += edges
    if impact.hidden:
        lines.append(f"      _{plural(impact.hidden, 'hidden entity', 'hidden entities')} on this path_")
    return "\n".join(lines)


FULL_TEXT_ENTRIES = 2_000


def blast_lines(
    result: BlastRadius,
    freshness: Freshness,
    passages: Sequence[CitedPassage] = (),
) -> Iterator[str]:
    """The whole answer as plain text, line by line (each ending in a newline), written as it is
    read: every impacted entity with its full cited path."""
    counts = _Counts.of(result)
    yield f"If {short_name(result.failed)} goes down: {counts.summary()}\n"
    if result.max_depth is not None:
        yield f"(walk limited to {plural(result.max_depth, 'hop')})\n"
    hops, shown = -1, 0
    # Bounded: each path costs a walk back to the failure, and a file of 100k paths helps no one
    # at 3 a.m.; the command line (`--json`) lists them all.
    for impact in result.iter_nearest(FULL_TEXT_ENTRIES):
        shown += 1
        if impact.hops != hops:
            hops = impact.hops
            yield plural(hops, "hop") + "\n"
        owners = ", ".join(short_name(o) for o in impact.owners) or "none known"
        yield f"  {short_name(impact.entity)}  {impact.impact}  owners: {owners}\n"
        yield "".join(f"      {cite_edge(e)}\n" for e in reversed(impact.edges))
        if impact.hidden:
            yield f"      {plural(impact.hidden, 'hidden entity', 'hidden entities')} on this path\n"
    if counts.visible > shown:
        rest = counts.visible - shown
        yield f"… and {rest} more impacted entities: oncall-graph blast-radius {result.failed} --json lists all\n"
    systems = ", ".join(f"{short_name(s.entity)} ({s.impacted}/{s.total})" for s in result.systems)
    if systems:
        yield f"systems impacted: {systems}\n"
    yield f"survives ({len(result.survives)}): {', '.join(short_name(r) for r in result.survives)}\n"
    yield from (line + "\n" for line in passages_plain(passages))
    yield graph_age(freshness) + "\n"
    yield from (f"⚠ stale graph: {reason}\n" for reason in freshness.warnings)


def blast_summary(result: BlastRadius, *, top: int = 5) -> list[Block]:
    """A short blast radius for an alert thread: counts and the nearest `top` impacted entities."""
    counts = _Counts.of(result)
    lines = [f"*If {escape(name(result.failed))} goes down*: {counts.summary()}"]
    impacts = result.nearest(top)
    lines += [impact_entry(i, edges_shown=1) for i in impacts]
    if counts.visible > len(impacts):
        lines.append(f"_… and {counts.visible - len(impacts)} more (`/blast-radius {escape(result.failed)}`)_")
    if not impacts:
        lines.append(_nothing(result, counts))
    return pack(lines)

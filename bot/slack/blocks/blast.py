"""/blast-radius as Block Kit: counts, impacted entities by hops with owners and cited paths, survivors.

Only the first screen's paths are built (`BlastRadius.nearest`); the whole answer is walked only
when it does not fit and goes into `full_text`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.render.freshness import Freshness
from bot.render.links import opening_lines
from bot.render.live import failing_count
from bot.render.wording import plural
from bot.slack.blocks.freshness import freshness_blocks, graph_age, stale_prefix
from bot.slack.blocks.kit import (
    BLOCKS_JSON_BUDGET,
    CARD_CHARS,
    CARD_JSON,
    TABLE_ROWS,
    TEXT_BUDGET,
    Block,
    SlackMessage,
    cited,
    code,
    escape,
    fit,
    header,
    json_length,
    message,
    name,
    names,
    pack,
    section,
    share_button,
    source_links,
    sources_card,
    table,
    text_length,
)
from bot.slack.blocks.live import NOW_HEADING, live_context, now_lines, now_plain
from bot.slack.blocks.passages import passages_blocks, passages_plain
from graph.citations import cite_edge, provenance
from graph.coverage import DEPENDENTS, nothing_found
from graph.edges import EdgeFacts
from graph.exposure.passages import CitedPassage
from graph.exposure.visibility import HIDDEN
from graph.naming.refs import short_name
from graph.traffic.live import NOTHING, LiveBlast, Present
from graph.walks.blast import BREAKS, BlastRadius, Impact

FIRST_SCREEN = 60  # more than ever fit: the budget decides how many are shown
SURVIVORS_SHOWN = 15
SYSTEMS_SHOWN = 8
EDGES_SHOWN = 4
OWNERS_SHOWN = 5
RESERVE = 150  # the "and N more" line
# Impacted entities are entries with their cited paths while all of them fit; a list too long for
# that is one table (a row each, many more shown), its paths in the attached text and on the card.
TABLE_HEAD = ("entity", "impact", "hops", "owners", "via")


@dataclass(frozen=True, slots=True)
class _Counts:
    breaks: int
    degrades: int
    systems: int
    hidden: int
    visible: int
    failing: int = 0  # impacted entities failing now

    @classmethod
    def of(cls, result: BlastRadius, live: LiveBlast | None = None) -> _Counts:
        hidden = result.hidden_count
        breaks, degrades = result.breaks_count, result.degrades_count
        failing = live.failing if live is not None else 0
        return cls(breaks, degrades, len(result.systems), hidden, breaks + degrades - hidden, failing)

    def summary(self) -> str:
        text = f"{self.breaks} break · {self.degrades} degrade · {plural(self.systems, 'system')} impacted"
        return text + (f" · {self.hidden} hidden here" if self.hidden else "") + failing_count(self.failing)


def format_blast_radius(
    result: BlastRadius,
    freshness: Freshness,
    *,
    shared: bool = False,
    passages: Sequence[CitedPassage] = (),
    live: Present = NOTHING,
) -> SlackMessage:
    """What breaks if the entity fails, within Slack's limits; `full_text` holds all of it when cut.

    `passages` are runbook passages to quote (chosen for this viewer), shown above the footer; with a
    live part, the entities failing now come first, each entry says how its hop is doing, and one
    line cites where that came from (or says it is missing)."""
    shown = LiveBlast(result, live)
    counts = _Counts.of(result, shown)
    warning, footer = freshness_blocks(freshness)
    head = [header(f"Blast radius: {short_name(result.failed)}"), *warning, section(_counts_text(result, counts))]
    tail = [section(_survivors_text(result)), *passages_blocks(passages), *live_context(live), footer]
    if not shared:
        tail += share_button(_share_value(result))
    room = TEXT_BUDGET - text_length(head + tail) - RESERVE - CARD_CHARS
    impacts = shown.first(FIRST_SCREEN)
    lines, listed = impact_lines(impacts, room, shown)
    body = pack(lines) if lines else [section(_nothing(result, counts))]
    tabled = False
    if listed < counts.visible:  # a row each shows more of a long list, where the names are long
        many = shown.first(TABLE_ROWS - 1)
        fixed = json_length(head + tail) + CARD_JSON + RESERVE
        rows, fitted = impact_table(many, BLOCKS_JSON_BUDGET - fixed, shown)
        if fitted > listed:
            body, listed, impacts, tabled = rows, fitted, many, True
    more = counts.visible - listed
    if more > 0:
        body.append(
            section(f"_… and {plural(more, 'more impacted entity', 'more impacted entities')} (full list attached)_")
        )
    body += sources_card((e for i in impacts[:listed] for e in i.edges), "blast-sources")
    cut = more > 0 or len(result.systems) > SYSTEMS_SHOWN or _elided(impacts[:listed]) or tabled
    text = f"{stale_prefix(freshness)}If {short_name(result.failed)} goes down: {counts.summary()}"
    full = (lambda: blast_lines(result, freshness, passages, live)) if cut else None
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
    count = result.survivors_count  # counted: the few named are all that is listed
    if not count:
        return "*Survives*: nothing else in the graph"
    more = f" and {count - SURVIVORS_SHOWN} more" if count > SURVIVORS_SHOWN else ""
    return f"*Survives* ({count}): {escape(names(result.first_survivors(SURVIVORS_SHOWN), SURVIVORS_SHOWN))}{more}"


def _share_value(result: BlastRadius) -> dict[str, object]:
    value: dict[str, object] = {"cmd": "blast-radius", "name": result.failed}
    if result.max_depth is not None:
        value["depth"] = result.max_depth
    return value


def impact_lines(impacts: tuple[Impact, ...], room: int, live: LiveBlast | None = None) -> tuple[list[str], int]:
    """(mrkdwn entries, a heading opening each group, how many fit in `room`): those failing now
    first under their own heading, then nearest first by hops."""
    entries = []
    for i, impact in enumerate(impacts):
        group = _group(impact, live)
        heading = "" if i > 0 and _group(impacts[i - 1], live) == group else _heading(group)
        entries.append(heading + impact_entry(impact, live=live))
    shown = fit(entries, room)
    return entries[:shown], shown


def impact_table(impacts: tuple[Impact, ...], room: int, live: LiveBlast) -> tuple[list[Block], int]:
    """(one table block, how many rows fit in `room` characters of block JSON): failing now first,
    then nearest first, as the entries are."""
    rows = [impact_row(i, live) for i in impacts]
    return table(TABLE_HEAD, rows, ("left", "left", "right", "left", "left"), room=room)


def impact_row(impact: Impact, live: LiveBlast) -> tuple[str, ...]:
    """entity, breaks/degrades (and failing now), hops, owners, via: the next hop towards the failure
    and where that hop comes from (`declared`, `observed`)."""
    mark = live.mark(impact)
    state = f"{impact.impact} · failing now" if mark is not None and mark.failing else impact.impact
    owners = names(impact.owners, OWNERS_SHOWN) or "none known"
    return short_name(impact.entity), state, str(impact.hops), owners, _via(impact)


def _via(impact: Impact) -> str:
    if len(impact.path) < 2:
        return ""
    hop = impact.path[-2]
    shown = "a hidden entity" if hop == HIDDEN else short_name(hop)
    last = impact.edges[-1] if impact.edges else None
    if last is None or impact.entity not in (last.src, last.dst):
        return shown
    return f"{shown} ({provenance(last)})"


def _group(impact: Impact, live: LiveBlast | None) -> int:
    """The hops an entry is listed under, or 0 for the entities failing now."""
    return 0 if live is not None and impact.entity in live.now_refs else impact.hops


def _heading(group: int) -> str:
    return f"{NOW_HEADING}\n" if group == 0 else f"*{plural(group, 'hop')}*\n"


def impact_entry(impact: Impact, *, edges_shown: int = EDGES_SHOWN, live: LiveBlast | None = None) -> str:
    mark = "✗" if impact.impact == BREAKS else "~"
    owners = escape(names(impact.owners, OWNERS_SHOWN)) or "_none known_"
    lines = [f"{mark} *{escape(name(impact.entity))}* {impact.impact} · owners: {owners}"]
    if live is not None:
        lines += now_lines(live.present, live.mark(impact), live.incidents(impact))
    # Read from the impacted entity back to the failure, as people ask "why does this break?".
    edges = [f"      {code(cited(e))} {source_links(e)}".rstrip() for e in reversed(impact.edges)]
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
    live: Present = NOTHING,
) -> Iterator[str]:
    """The whole answer as plain text, line by line (each ending in a newline), written as it is
    read: every impacted entity (those failing now first) with its full cited path."""
    shown = LiveBlast(result, live)
    counts = _Counts.of(result, shown)
    yield f"If {short_name(result.failed)} goes down: {counts.summary()}\n"
    if result.max_depth is not None:
        yield f"(walk limited to {plural(result.max_depth, 'hop')})\n"
    group, listed = -1, 0
    # Bounded: each path costs a walk back to the failure, and a file of 100k paths helps no one
    # at 3 a.m.; the command line (`--json`) lists them all.
    for impact in shown.iter_first(FULL_TEXT_ENTRIES):
        listed += 1
        if _group(impact, shown) != group:
            group = _group(impact, shown)
            yield ("now: failing, or with an open incident" if group == 0 else plural(group, "hop")) + "\n"
        owners = ", ".join(short_name(o) for o in impact.owners) or "none known"
        yield f"  {short_name(impact.entity)}  {impact.impact}  owners: {owners}\n"
        yield "".join(f"{line}\n" for line in now_plain(live, shown.mark(impact), shown.incidents(impact)))
        yield "".join(f"{line}\n" for e in reversed(impact.edges) for line in cited_plain(e, "      "))
        if impact.hidden:
            yield f"      {plural(impact.hidden, 'hidden entity', 'hidden entities')} on this path\n"
    if counts.visible > listed:
        rest = counts.visible - listed
        yield f"… and {rest} more impacted entities: oncall-graph blast-radius {result.failed} --json lists all\n"
    systems = ", ".join(f"{short_name(s.entity)} ({s.impacted}/{s.total})" for s in result.systems)
    if systems:
        yield f"systems impacted: {systems}\n"
    yield f"survives ({len(result.survives)}): {', '.join(short_name(r) for r in result.survives)}\n"
    yield from (line + "\n" for line in passages_plain(passages))
    if live.configured:
        yield live.said() + "\n"
    yield graph_age(freshness) + "\n"
    yield from (f"⚠ stale graph: {reason}\n" for reason in freshness.warnings)


def cited_plain(edge: EdgeFacts, indent: str) -> list[str]:
    """An edge's receipt as plain text, each source that opens somewhere under it with its URL."""
    return [f"{indent}{cite_edge(edge)}", *opening_lines(edge, indent)]


def blast_summary(result: BlastRadius, *, top: int = 5, live: Present = NOTHING) -> list[Block]:
    """A short blast radius for an alert thread: counts and the first `top` impacted entities (those
    failing now first, each marked)."""
    shown = LiveBlast(result, live)
    counts = _Counts.of(result, shown)
    lines = [f"*If {escape(name(result.failed))} goes down*: {counts.summary()}"]
    impacts = shown.first(top)
    lines += [impact_entry(i, edges_shown=1, live=shown) for i in impacts]
    if counts.visible > len(impacts):
        lines.append(f"_… and {counts.visible - len(impacts)} more (`/blast-radius {escape(result.failed)}`)_")
    if not impacts:
        lines.append(_nothing(result, counts))
    return pack(lines)

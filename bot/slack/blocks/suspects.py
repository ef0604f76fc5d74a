"""/suspects and the PagerDuty thread reply as Block Kit: the alerting entity, its recent deploys,
what it depends on (by hops, with owners and the cited edge) and which of those deployed in the window.

A deploy is always a *suspect*, with its reason — never called the cause.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from bot.model.ports import Phrasing
from bot.query.bundle import SUSPECTS_DEPTH
from bot.render.freshness import Freshness
from bot.render.wording import format_age, plural, utc, window_span, window_token
from bot.slack.blocks.blast import blast_lines, blast_summary, cited_plain
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
    clip,
    code,
    context,
    divider,
    escape,
    header,
    json_length,
    labelled_link,
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
from graph.citations import CitedSource, provenance
from graph.coverage import DEPENDENCIES, nothing_found
from graph.exposure.passages import CitedPassage
from graph.naming.refs import short_name
from graph.traffic.live import NOTHING, Present
from graph.walks.blast import BlastRadius
from graph.walks.suspects import Dependency, SuspectDeploy, Suspects

DEPLOYS_SHOWN = 5
OWNERS_SHOWN = 5
FIELD_CHARS = 80
HEADING_COST = 12  # "*N hops*\n" before the first entry of each hop
RESERVE = 150
PHRASING_CHARS = 2500
# Dependencies are entries while all of them fit; past that, those with a suspect deploy or failing
# now stay entries and the quiet rest are one table (many more of them shown, a row each).
TABLE_HEAD = ("entity", "hops", "owners", "via")


def format_suspects(
    result: Suspects,
    freshness: Freshness,
    *,
    shared: bool = False,
    passages: Sequence[CitedPassage] = (),
    live: Present = NOTHING,
) -> SlackMessage:
    """The on-call view of an alert; dependencies failing now, then those with suspect deploys, are
    the last to be cut.

    `passages` are runbook passages to quote (chosen for this viewer), shown above the footer."""
    warning, footer = freshness_blocks(freshness)
    head = [header(f"Suspects: {short_name(result.entity)}"), *warning, *_summary_blocks(result)]
    tail = [*passages_blocks(passages), *live_context(live), footer]
    tail += [] if shared else share_button(_share_value(result))
    room = TEXT_BUDGET - text_length(head + tail) - RESERVE - CARD_CHARS
    body, cut = _dependency_blocks(result, room, live, BLOCKS_JSON_BUDGET - json_length(head + tail) - CARD_JSON)
    full = (lambda: (suspects_text(result, freshness, passages, live),)) if cut else None
    return message(stale_prefix(freshness) + _fallback(result), head + body + tail, full)


def format_alert_reply(
    suspects_result: Suspects,
    blast_result: BlastRadius,
    freshness: Freshness,
    *,
    passages: Sequence[CitedPassage] = (),
    phrasing: Phrasing | None = None,
    live: Present = NOTHING,
) -> SlackMessage:
    """The reply in a PagerDuty alert's thread: the suspects view, then a short blast radius (its
    dependents failing now first, marked); with a phrasing, the model's summary first, marked as the
    model's (the views below stay the graph's)."""
    warning, footer = freshness_blocks(freshness)
    phrased = []
    if phrasing:
        phrased = [section(escape(clip(phrasing.text, PHRASING_CHARS))), context(escape(phrasing.marker))]
    head = [
        header(f"Alert on {short_name(suspects_result.entity)}"),
        *warning,
        *phrased,
        *_summary_blocks(suspects_result),
    ]
    tail = [divider(), *blast_summary(blast_result, live=live), *passages_blocks(passages), *live_context(live), footer]
    room = TEXT_BUDGET - text_length(head + tail) - RESERVE - CARD_CHARS
    json_room = BLOCKS_JSON_BUDGET - json_length(head + tail) - CARD_JSON
    body, cut = _dependency_blocks(suspects_result, room, live, json_room)

    def full() -> Iterator[str]:
        if phrasing:
            yield f"{phrasing.text}\n({phrasing.marker})\n"
        yield suspects_text(suspects_result, freshness, passages, live) + "\n"
        yield from blast_lines(blast_result, freshness, live=live)

    text = stale_prefix(freshness) + _fallback(suspects_result)
    return message(text, head + body + tail, full if cut else None)


def _fallback(result: Suspects) -> str:
    count = len(result.suspect_deploys)
    window = window_token(result.now - result.since)
    if count:
        return f"Suspects for {short_name(result.entity)}: {plural(count, 'deploy')} in the last {window}"
    return f"Suspects for {short_name(result.entity)}: no deploys in the last {window}"


def _share_value(result: Suspects) -> dict[str, object]:
    value: dict[str, object] = {
        "cmd": "suspects",
        "name": result.entity,
        "since": window_token(result.now - result.since),
    }
    if result.max_depth != SUSPECTS_DEPTH:
        value["depth"] = result.max_depth
    return value


def _summary_blocks(result: Suspects) -> list[Block]:
    count = len(result.suspect_deploys)
    verdict = f"*{plural(count, 'suspect deploy')}*" if count else "no deploys in the window"
    summary = (
        f"*{escape(name(result.entity))}* is alerting · deploys {window_span(result.since, result.now)}"
        f" ({window_token(result.now - result.since)}) · dependencies up to {plural(result.max_depth, 'hop')}"
        f" · {verdict}"
    )
    if result.hidden:
        summary += f" · {plural(result.hidden, 'dependency', 'dependencies')} hidden here"
    own = [deploy_line(s, result.now) for s in result.own_deploys[:DEPLOYS_SHOWN]]
    if len(result.own_deploys) > DEPLOYS_SHOWN:
        own.append(f"_… and {len(result.own_deploys) - DEPLOYS_SHOWN} more of its own deploys_")
    own_text = "*Own deploys*\n" + "\n".join(own) if own else "*Own deploys*: none in the window"
    return [section(summary), *pack([own_text])]


def deploy_line(suspect: SuspectDeploy, now: datetime) -> str:
    d = suspect.deploy
    what = " ".join(
        part
        for part in (
            labelled_link(d.url, clip(d.id, FIELD_CHARS)),
            escape(clip(d.version, FIELD_CHARS)),
            f"[{escape(clip(d.git_ref, FIELD_CHARS))}]" if d.git_ref else "",
            f"({escape(clip(d.environment, FIELD_CHARS))})" if d.environment else "",
            f"by {escape(clip(d.actor, FIELD_CHARS))}" if d.actor else "",
        )
        if part
    )
    when = f"at {utc(d.deployed_at)}, {format_age((now - d.deployed_at).total_seconds())} ago"
    return f"🚩 *suspect* — {escape(suspect.reason)}: {what} {when}"


def dependency_entry(dep: Dependency, now: datetime, live: Present = NOTHING) -> str:
    owners = escape(names(dep.owners, OWNERS_SHOWN)) or "_none known_"
    lines = [f"*{escape(name(dep.entity))}* · owners: {owners}"]
    lines += now_lines(live, live.mark(dep.edges, dep.entity), live.open_incidents(dep.entity))
    if dep.edges:
        lines.append(f"      {code(cited(dep.edges[-1]))} {source_links(dep.edges[-1])}".rstrip())
    if dep.hidden:
        lines.append(f"      _{plural(dep.hidden, 'hidden entity', 'hidden entities')} on this path_")
    lines += [f"      {deploy_line(s, now)}" for s in dep.deploys[:DEPLOYS_SHOWN]]
    if len(dep.deploys) > DEPLOYS_SHOWN:
        lines.append(f"      _… and {len(dep.deploys) - DEPLOYS_SHOWN} more deploys_")
    return "\n".join(lines)


def _failing_now(dep: Dependency, live: Present) -> bool:
    """Failing now or with an open incident: listed first, under their own heading."""
    mark = live.mark(dep.edges, dep.entity)
    return (mark is not None and mark.failing) or bool(live.open_incidents(dep.entity))


def _dependency_blocks(result: Suspects, room: int, live: Present, json_room: int) -> tuple[list[Block], bool]:
    """(blocks, whether anything was left out): entries chosen failing-now first, then suspects,
    shown in the order the query layer ranked them, each group under its heading."""
    deps = result.dependencies
    if not deps:
        return [section(escape(nothing_found(result.entity, DEPENDENCIES, result.coverage)))], False
    now = [_failing_now(d, live) for d in deps]
    entries = [dependency_entry(d, result.now, live) for d in deps]
    chosen = _choose(deps, entries, room, now)
    blocks, tabled = _entries(deps, chosen, entries, now), False
    if len(chosen) < len(deps):
        # Too many for entries: those that need reading (a suspect deploy, failing now) stay entries and
        # the quiet rest are one table, where that shows more of them (a row each costs its JSON).
        needed = [i for i in range(len(deps)) if now[i] or deps[i].deploys]
        picked = _choose([deps[i] for i in needed], [entries[i] for i in needed], room, [now[i] for i in needed])
        kept = [needed[j] for j in picked]
        quiet = sorted(set(range(len(deps))) - set(needed))
        cells = [dependency_row(deps[i]) for i in quiet[: TABLE_ROWS - 1]]
        first = _entries(deps, kept, entries, now)
        built, fitted = table(TABLE_HEAD, cells, ("left", "right"), room=json_room - json_length(first))
        if len(kept) + fitted > len(chosen):
            blocks, chosen, tabled = first + built, sorted([*kept, *quiet[:fitted]]), True
    left = len(deps) - len(chosen)
    if left:
        blocks.append(section(f"_… and {plural(left, 'more dependency', 'more dependencies')} (full list attached)_"))
    shown = [deps[i] for i in chosen]
    suspected = [*result.own_deploys[:DEPLOYS_SHOWN], *(s for d in shown for s in d.deploys[:DEPLOYS_SHOWN])]
    deploys = [CitedSource(f"deploy {s.deploy.id}", s.deploy.url) for s in suspected]
    blocks += sources_card((d.edges[-1] for d in shown if d.edges), "suspects-sources", deploys)
    cut = left > 0 or any(len(d.deploys) > DEPLOYS_SHOWN for d in deps) or len(result.own_deploys) > DEPLOYS_SHOWN
    return blocks, cut or tabled


def _entries(
    deps: Sequence[Dependency], chosen: Sequence[int], entries: Sequence[str], now: Sequence[bool]
) -> list[Block]:
    """The chosen dependencies' entries, each group under its heading."""
    lines, group = [], ""
    for i in chosen:
        heading = NOW_HEADING if now[i] else f"*{plural(deps[i].hops, 'hop')}*"
        lines.append(("" if heading == group else f"{heading}\n") + entries[i])
        group = heading
    return pack(lines)


def dependency_row(dep: Dependency) -> tuple[str, ...]:
    """entity, hops, owners, via: the hop it is reached from and where that hop comes from."""
    owners = names(dep.owners, OWNERS_SHOWN) or "none known"
    via = ""
    if dep.edges:
        last = dep.edges[-1]
        other = last.src if last.dst == dep.entity else last.dst
        via = f"{short_name(other)} ({provenance(last)})"
    elif dep.hidden:
        via = "a hidden entity"
    return short_name(dep.entity), str(dep.hops), owners, via


def _choose(deps: Sequence[Dependency], entries: Sequence[str], room: int, now: Sequence[bool]) -> list[int]:
    used, chosen = 0, []
    for i in sorted(range(len(deps)), key=lambda i: (not now[i], not deps[i].deploys, i)):
        used += len(entries[i]) + 1 + HEADING_COST
        if used > room:
            break
        chosen.append(i)
    return sorted(chosen)


def suspects_text(
    result: Suspects,
    freshness: Freshness,
    passages: Sequence[CitedPassage] = (),
    live: Present = NOTHING,
) -> str:
    """The whole suspects answer as plain text: every dependency, edge and deploy."""
    lines = [f"{_fallback(result)} ({utc(result.since)} – {utc(result.now)})"]
    lines += [f"  ! suspect — {s.reason}: {_deploy_plain(s)}" for s in result.own_deploys]
    for dep in result.dependencies:
        owners = ", ".join(short_name(o) for o in dep.owners) or "none known"
        indent = "  " * dep.hops
        lines.append(f"{indent}{short_name(dep.entity)}  ({plural(dep.hops, 'hop')})  owners: {owners}")
        lines += now_plain(live, live.mark(dep.edges, dep.entity), live.open_incidents(dep.entity), f"{indent}    ")
        lines += [line for e in dep.edges[-1:] for line in cited_plain(e, f"{indent}    ")]
        if dep.hidden:
            lines.append(f"{indent}    {plural(dep.hidden, 'hidden entity', 'hidden entities')} on this path")
        lines += [f"{indent}    ! suspect — {s.reason}: {_deploy_plain(s)}" for s in dep.deploys]
    if result.hidden:
        lines.append(f"{plural(result.hidden, 'dependency', 'dependencies')} hidden here")
    lines += passages_plain(passages)
    lines += [live.said()] if live.configured else []
    lines.append(graph_age(freshness))
    lines += [f"⚠ stale graph: {reason}" for reason in freshness.warnings]
    return "\n".join(lines) + "\n"


def _deploy_plain(suspect: SuspectDeploy) -> str:
    d = suspect.deploy
    parts = [d.id, d.version, f"({d.environment})" if d.environment else "", f"by {d.actor}" if d.actor else ""]
    url = f" {d.url}" if d.url else ""
    return f"{' '.join(p for p in parts if p)} at {utc(d.deployed_at)}{url}"

"""Answers as terminal text that reads at a glance: grouped by hops, the cited path under each.

Pure: returns rich `Text` lines; styles vanish by themselves when output is piped. Source text goes
in as `Text` content, never as markup, so `[bold red]` or `[link=…]` in a name prints as written;
control characters (ESC starting CSI or OSC 8 sequences, BEL, bidi overrides) are replaced by
`terminal_safe` on every line these renderers return.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any, ParamSpec, TypeVar

from rich.console import Console
from rich.text import Text

from bot.model.ports import Phrasing
from bot.render.freshness import Freshness
from bot.render.labels import labelled
from bot.render.links import opening_lines, web_url
from bot.render.live import failing_count, incident_text, mark_text
from bot.render.wording import format_age as format_age  # re-exported: bot.cli.main reads it from here
from bot.render.wording import more_problems, problem_text, problems_heading, window_span
from bot.render.wording import summarized as _summarized
from graph.citations import cite_edge
from graph.coverage import DEPENDENCIES, DEPENDENTS, nothing_found, what_it_knows
from graph.edges import EdgeFacts
from graph.exposure.passages import CitedPassage, snippet
from graph.facts import Deploy, Problem
from graph.health.hygiene import LintReport
from graph.health.source_problems import SourceProblems
from graph.naming.names import Resolution
from graph.naming.refs import short_name
from graph.questions.ask import Answer
from graph.traffic.drift import Drift, drift_summary
from graph.traffic.live import NOTHING, Incident, LiveBlast, LiveMark, Present
from graph.walks.blast import BREAKS, BlastRadius, Impact
from graph.walks.paths import CitedPath, chain_text
from graph.walks.suspects import Suspects

PER_GROUP = 15
SURVIVORS_SHOWN = 20

# C0 and C1 controls but newline and tab, DEL, and the bidirectional overrides and isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
REPLACEMENT = "\ufffd"
_P = ParamSpec("_P")
_R = TypeVar("_R", Text, list[Text])


def terminal_safe(text: str) -> str:
    """`text` with every character a terminal would act on replaced, one for one (so styles keep
    their spans)."""
    return _CONTROL.sub(REPLACEMENT, text)


def _safe_line(line: Text) -> Text:
    cleaned = terminal_safe(line.plain)
    if cleaned != line.plain:
        line.plain = cleaned
    return line


def _terminal_safe(render: Callable[_P, _R]) -> Callable[_P, _R]:
    @functools.wraps(render)
    def safe(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        rendered = render(*args, **kwargs)
        if isinstance(rendered, Text):
            return _safe_line(rendered)
        return [_safe_line(line) for line in rendered]

    return safe


class SafeConsole(Console):
    """A console for the command line's every line: a source problem, a lag error, a usage error or a
    suggestion carries source text, so each string or `Text` printed goes through `terminal_safe`
    (and a string is printed as written, never read as rich markup)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(_printable(o) for o in objects), **kwargs)


def _printable(thing: object) -> object:
    if isinstance(thing, Text):
        return _safe_line(thing.copy())
    if isinstance(thing, str):
        return Text(terminal_safe(thing))
    return thing


def terminal_safe_json(data: object) -> str:
    """`data` as indented JSON with every character `terminal_safe` replaces written as a `\\uXXXX`
    escape: the same JSON value, but nothing a terminal acts on when it is printed unpiped."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _CONTROL.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


@_terminal_safe
def graph_header(freshness: Freshness) -> Text:
    oldest, age = freshness.oldest, freshness.age_seconds
    line = Text(f"graph: {freshness.entities} entities, {freshness.edges} edges", style="dim")
    if oldest and age is not None:
        line.append(f" · oldest source {oldest.name}, {format_age(age)} old")
    if freshness.failing:
        line.append(f" · failing: {', '.join(freshness.failing)}", style="bold red")
    return line


@_terminal_safe
def stale_lines(freshness: Freshness) -> list[Text]:
    """The warning under the header: one line per source an answer must not be trusted on."""
    return [Text(f"⚠ stale graph: {reason}", style="bold yellow") for reason in freshness.warnings]


def _names(refs: Iterable[str]) -> str:
    return ", ".join(short_name(r) for r in refs)


def _impact_lines(impact: Impact, live: LiveBlast | None = None) -> list[Text]:
    mark = "✗" if impact.impact == BREAKS else "~"
    style = "bold red" if impact.impact == BREAKS else "yellow"
    head = Text(f"  {mark} ", style=style)
    head.append(short_name(impact.entity), style="bold")
    head.append(f"  {impact.impact}")
    head.append(f"  owners: {_names(impact.owners) or 'none known'}", style="cyan")
    now = _now_lines(live.present, live.mark(impact), live.incidents(impact)) if live else []
    return [head, *now] + [line for e in reversed(impact.edges) for line in cited_lines(e, "      ", "dim")]


def cited_lines(edge: EdgeFacts, indent: str, style: str = "") -> list[Text]:
    """The edge's receipt, then each of its sources that opens somewhere with its URL beside it
    (`↗ catalog/payments.yaml#3 https://…`): printed as text, never as a terminal hyperlink."""
    lines = [Text(f"{indent}{cite_edge(edge)}", style=style)]
    return lines + [Text(line, style="dim") for line in opening_lines(edge, indent)]


def _now_lines(live: Present, mark: LiveMark | None, incidents: Sequence[Incident]) -> list[Text]:
    """How an entry's hop is doing now, and its open incidents, under its heading line."""
    lines = []
    if mark is not None:
        said = mark_text(mark, live)
        lines.append(Text(f"      now: {said}", style="bold red") if mark.failing else Text(f"      {said}", "green"))
    lines += [Text(f"      {incident_text(i)} {i.url}".rstrip(), style="bold red") for i in incidents]
    return lines


def _live_line(live: Present) -> list[Text]:
    """The one line citing the live part, or saying it is missing; none without one."""
    if not live.configured:
        return []
    return [Text(live.said(), style="bold yellow" if live.missing else "dim")]


@_terminal_safe
def render_blast(result: BlastRadius, live: Present = NOTHING) -> list[Text]:
    """Entities failing now (or with an open incident) first under their own heading, then by hops."""
    shown = LiveBlast(result, live)
    impacted = result.impacted
    breaks = sum(1 for i in impacted if i.impact == BREAKS)
    title = Text("if ", style="bold")
    title.append(short_name(result.failed), style="bold magenta")
    title.append(
        f" goes down: {breaks} break, {len(impacted) - breaks} degrade, {len(result.systems)} systems impacted"
        + failing_count(shown.failing),
        style="bold",
    )
    lines = [title]
    if result.max_depth is not None:
        lines.append(Text(f"(walk limited to {result.max_depth} hops)", style="dim"))
    if shown.now:
        lines.append(Text("now: failing, or with an open incident", style="bold underline red"))
        for impact in shown.now:
            lines += _impact_lines(impact, shown)
    rest = [i for i in impacted if i.entity not in shown.now_refs]
    for hops, group in groupby(rest, key=lambda i: i.hops):
        members = list(group)
        lines.append(Text(f"{hops} hop{'s' if hops != 1 else ''}", style="bold underline"))
        for impact in members[:PER_GROUP]:
            lines += _impact_lines(impact, shown)
        if len(members) > PER_GROUP:
            lines.append(Text(f"  … and {len(members) - PER_GROUP} more at {hops} hops (--json lists all)"))
    if not impacted:
        lines.append(Text(nothing_found(result.failed, DEPENDENTS, result.coverage)))
    if result.systems:
        systems = ", ".join(f"{short_name(s.entity)} ({s.impacted}/{s.total})" for s in result.systems)
        lines.append(Text(f"systems impacted: {systems}"))
    survivors = [short_name(r) for r in result.survives]
    lines.append(Text(f"survives ({len(survivors)}): {_summarized(survivors, SURVIVORS_SHOWN)}", style="green"))
    return lines + _live_line(live)


@_terminal_safe
def render_suspects(result: Suspects, live: Present = NOTHING) -> list[Text]:
    """Dependencies in the order the query layer ranked them (with a live part, failing now first)."""
    window = window_span(result.since, result.now)
    lines = [Text(f"suspects for {short_name(result.entity)}: deploys {window}", style="bold")]
    for s in result.own_deploys:
        what = _version(s.deploy)
        lines.append(Text(f"  ! {s.deploy.id} {what} at {s.deploy.deployed_at:%H:%M} — {s.reason}", "red"))
        if url := web_url(s.deploy.url):
            lines.append(Text(f"    ↗ deploy {s.deploy.id} {url}", style="dim"))
    for dep in result.dependencies:
        head = Text(f"  {'  ' * (dep.hops - 1)}{short_name(dep.entity)}", style="bold")
        head.append(f"  owners: {_names(dep.owners) or 'none known'}", style="cyan")
        lines.append(head)
        lines += _now_lines(live, live.mark(dep.edges, dep.entity), live.open_incidents(dep.entity))
        # A dependency reached through a hidden entity has no edge this viewer may read.
        if dep.edges:
            lines += cited_lines(dep.edges[-1], "      ", "dim")
        else:
            lines.append(Text(f"      via {dep.hidden} hidden", style="dim"))
        for s in dep.deploys:
            d = s.deploy
            when = f"{d.deployed_at:%Y-%m-%d %H:%M}"
            text = f"      ! suspect: {d.id} {_version(d)} at {when} by {d.actor or '?'} ({s.reason})"
            lines.append(Text(text, style="bold red"))
            if url := web_url(d.url):
                lines.append(Text(f"        ↗ deploy {d.id} {url}", style="dim"))
    if not result.dependencies:
        lines.append(Text(f"  {nothing_found(result.entity, DEPENDENCIES, result.coverage)}"))
    if not result.suspect_deploys:
        lines.append(Text("no deploys in the window", style="green"))
    return lines + _live_line(live)


def _version(deploy: Deploy) -> str:
    """`a1b2c3d [main]`: the commit deployed, the branch or tag beside it."""
    return f"{deploy.version} [{deploy.git_ref}]" if deploy.git_ref else deploy.version


@_terminal_safe
def render_passages(passages: Sequence[CitedPassage]) -> list[Text]:
    """One "Runbooks:" line per quoted passage: where it is, which entity it is about, how it starts."""
    lines = []
    for cited in passages:
        line = Text("Runbooks: ", style="bold")
        line.append(cited.locator, style="cyan")
        line.append(f" ({short_name(cited.entity)}) — ", style="dim")
        line.append(snippet(cited.passage), style="dim")
        lines.append(line)
    return lines


@_terminal_safe
def render_path(result: CitedPath) -> list[Text]:
    if not result.path:
        return [Text(f"no chain of edges between {short_name(result.src)} and {short_name(result.dst)}")]
    lines = [Text(chain_text(result, short_name), style="bold")]
    return lines + [line for e in result.edges for line in cited_lines(e, "  ")]


@_terminal_safe
def render_resolution(resolution: Resolution) -> list[Text]:
    if resolution.entity:
        return [Text(f"{resolution.query!r} is {resolution.entity} (matched by {resolution.matched_by})")]
    return render_unresolved(resolution)


@_terminal_safe
def render_unresolved(resolution: Resolution) -> list[Text]:
    if resolution.ambiguous:
        lines = [Text(f"{resolution.query!r} is ambiguous; it could be:", style="bold yellow")]
        return lines + [Text(f"  {ref}") for ref in resolution.candidates]
    lines = [Text(f"{resolution.query!r} names no entity in the graph.", style="bold yellow")]
    if resolution.suggestions:
        lines.append(Text("did you mean:"))
        lines += [Text(f"  {ref}") for ref in resolution.suggestions]
    return lines


@_terminal_safe
def render_answer(answer: Answer, phrasing: Phrasing | None = None) -> list[Text]:
    """The model's phrasing and its marker when it phrased, the notes, then one section per ask: its
    heading ("payments — depends on"), the graph's lines, and the cited edges under them."""
    lines = [Text(phrasing.text), Text(phrasing.marker, style="italic dim")] if phrasing else []
    lines += [Text(note) for note in answer.notes]
    for section in answer.sections:
        lines.append(Text(section.title, style="bold underline"))
        lines += [Text(f"  {said}") for said in section.lines]
        lines += [Text(f"    {cited}", style="dim") for cited in labelled(section.edges, phrasing)]
    return lines


@_terminal_safe
def render_drift(report: Drift) -> list[Text]:
    """Where the catalog and the traffic disagree, then how much the graph can know."""
    heading = "bold underline"
    undeclared, unobserved, unknown = report.totals
    hint = "map it: an alias, or the oncall-graph/service-name annotation"
    lines = [Text("drift: where the catalog and the traffic disagree", style="bold")]
    lines.append(Text(f"undeclared: called, declared nowhere ({undeclared:,})", style=heading))
    lines += [Text(f"  {cite_edge(u.edge)}  {u.calls:,} calls") for u in report.undeclared]
    lines += _more(undeclared - len(report.undeclared))
    lines.append(Text(f"unobserved: declared, both ends busy, never seen calling ({unobserved:,})", heading))
    lines += [Text(f"  {cite_edge(e)}") for e in report.unobserved]
    lines += _more(unobserved - len(report.unobserved))
    lines.append(Text(f"unknown services: no entity answers to ({unknown:,})", style=heading))
    lines += [
        Text(f"  {u.name} ({u.side}, {u.calls:,} calls) [{', '.join(u.sources)}]  {hint}")
        for u in report.unknown_services
    ]
    lines += _more(unknown - len(report.unknown_services))
    lines.append(Text(f"coverage: {what_it_knows(report.coverage)}", style="cyan"))
    return lines


def _more(left_out: int) -> list[Text]:
    return (
        [Text(f"  … and {left_out:,} more (--limit N shows more, --json with --limit 0 all)", style="dim")]
        if left_out
        else []
    )


def render_lint(report: LintReport) -> list[Text]:
    sections = (
        ("sources that failed", [f"{m.name}: {m.last_error}" for m in report.failed_sources]),
        ("dangling refs", [str(p) for p in report.dangling]),
        ("kindless refs", [str(p) for p in report.kindless]),
        ("unknown owners", [str(p) for p in report.unknown_owners]),
        ("alias collisions", [f"{c.key!r} ({c.tier}): {', '.join(c.refs)}" for c in report.alias_collisions]),
        ("entities without an owner", [str(p) for p in report.without_owner]),
        ("deploys naming no entity", [str(p) for p in report.unresolved_deploys]),
        ("input problems", [str(p) for p in report.input_problems]),
    )
    # Skipped on purpose, only counted: YAML that is no descriptor, spans that make no call.
    skipped = Text(f"skipped on purpose: {len(report.not_descriptors)}", style="dim")
    lines = []
    for title, items in sections:
        if title == "sources that failed" and not items:
            continue  # the usual case: not worth a line
        lines.append(Text(f"{title}: {len(items)}", style="bold" if items else "green"))
        lines += [Text(f"  {item}") for item in items]
    lines.append(skipped)
    lines += [Text(f"  {p.where}: {p.message}", style="dim") for p in report.not_descriptors]
    if report.drift is not None:
        lines.append(Text(f"drift: {drift_summary(report.drift)} (oncall-graph drift lists them)", style="cyan"))
        lines.append(Text(f"coverage: {what_it_knows(report.drift.coverage)}", style="cyan"))
    return lines


@_terminal_safe
def render_read_problems(found: Mapping[str, Any]) -> list[Text]:
    """`oncall-graph lag`: a source's applied read's problems (its `--json` `read_problems`), bounded."""
    if not found["total"] and not found["skipped"]:
        return []
    shown = tuple(Problem(p["where"], p["message"], p["field"], p["severity"]) for p in found["shown"])
    problems = SourceProblems(found["total"], found["errors"], shown, found["skipped"])
    style = "red" if problems.errors else "yellow"
    lines = [Text(f"         {problems_heading(problems)}", style=style)]
    lines += [Text(f"           {problem_text(p)}", style=style) for p in shown]
    if more := more_problems(problems):
        lines.append(Text(f"           {more}", style="dim"))
    return lines

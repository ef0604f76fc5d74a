"""The blast radius and the suspects view as Graphviz DOT source: pure, deterministic, capped.

Only what a result holds is drawn — results computed for a viewer are already filtered, so a
restricted entity can never reach the picture. The nearest entities are drawn (at most
`max_nodes`); the rest are counted in one "and N more" node, survivors and hidden entities in a
note. Every string is quoted and escaped in one place (`quoted`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.render.wording import plural, utc, window_token
from graph.citations import provenance
from graph.edges import EdgeFacts
from graph.naming.refs import short_name
from graph.snapshot import Snapshot
from graph.walks.blast import BREAKS, BlastRadius
from graph.walks.suspects import SuspectDeploy, Suspects

MAX_NODES = 40  # entities drawn besides the failed or alerting one; past ~40 a PNG in Slack is unreadable
# Node ids of the summaries: entity refs always hold a ':', so these never meet an entity.
MORE_IMPACTED = "more-impacted"
MORE_DEPENDENCIES = "more-dependencies"
NOTE = "note"
LABEL_CHARS = 60
TITLE_CHARS = 160
OWNERS_SHOWN = 2
DEPLOYS_SHOWN = 3
ID_CHARS = 200  # Graphviz refuses a token past ~16k characters; a ref this long is still told apart by its hash

FONT = "Helvetica"  # fontconfig maps it to the installed sans (DejaVu, Liberation), which covers most scripts
RED, ORANGE, GREY, AMBER = "#c62828", "#ef6c00", "#78909c", "#ffe082"
FAILED = 'style="rounded,filled,bold", fillcolor="#c62828", color="#8e0000", fontcolor="white", penwidth=2'
BREAKS_STYLE = f'style="rounded,solid", color="{RED}", penwidth=2'
DEGRADES_STYLE = f'style="rounded,dashed", color="{ORANGE}", penwidth=2'
DEPENDENCY_STYLE = f'style="rounded", color="{GREY}"'
DEPLOYED_STYLE = f'style="rounded,filled,bold", fillcolor="{AMBER}", color="{ORANGE}", penwidth=2'
MORE_STYLE = f'style="rounded,dashed", color="{GREY}", fontcolor="{GREY}"'
NOTE_STYLE = f'shape=note, style="filled", fillcolor="#fffde7", color="{GREY}"'


@dataclass(frozen=True, slots=True)
class Picture:
    """DOT source, and how the rendered file is named and titled where it is shared."""

    source: str
    filename: str
    title: str


@dataclass
class _Layer:
    """Statements of one view around the central entity, and lines for the note."""

    nodes: list[str] = field(default_factory=list)
    edges: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def quoted(text: str) -> str:
    """A DOT double-quoted string. Control and format characters (newlines, bidi overrides) become
    spaces; backslashes and quotes are escaped, so no name can end the string early or be read as
    a label escape such as `\\N` or `\\l`. `<` needs nothing: only `<...>` unquoted is HTML."""
    clean = "".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in text)
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"') + '"'


def node_id(ref: str) -> str:
    """A DOT node id for `ref`, quoted: a long ref is clipped and keeps a hash of the whole, so two
    long refs sharing a beginning stay two nodes."""
    if len(ref) <= ID_CHARS:
        return quoted(ref)
    digest = hashlib.sha256(ref.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return quoted(f"{ref[: ID_CHARS - 17]}#{digest}")


def label(lines: Sequence[str], *, width: int = LABEL_CHARS) -> str:
    """A multi-line label: each line clipped and escaped as above, joined by DOT's line break."""
    return '"' + "\\n".join(quoted(_clip(line, width))[1:-1] for line in lines) + '"'


def blast_dot(result: BlastRadius, *, max_nodes: int = MAX_NODES) -> Picture:
    """What breaks (solid red) and degrades (dashed orange) when `result.failed` goes down: the
    failed entity on the left, what depends on it to its right (wide fan-outs stack downwards,
    which a phone scrolls better than a wide strip)."""
    name = short_name(result.failed)
    layer = _blast_layer(result, max_nodes)
    title = f"if {name} goes down: {result.impacted_count - result.hidden_count} impacted"
    center = _node(result.failed, _entity_label(result.failed, result.failed_owners), FAILED)
    return Picture(
        _graph("RL", title, center, [layer]),
        _filename("blast-radius", name),
        _clip(f"Blast radius of {name}", TITLE_CHARS),
    )


def suspects_dot(result: Suspects, snapshot: Snapshot, *, max_nodes: int = MAX_NODES) -> Picture:
    """What the alerting entity depends on; dependencies deployed in the window stand out, with
    their deploys in the label."""
    name = short_name(result.entity)
    layer = _suspects_layer(result, max_nodes)
    deployed = sum(1 for d in result.dependencies if d.deploys) + bool(result.own_deploys)
    window = window_token(result.now - result.since)
    title = f"suspects for {name}: {len(result.dependencies)} dependencies, {deployed} deployed in the last {window}"
    center = _center(result, snapshot)
    return Picture(
        _graph("LR", title, center, [layer]), _filename("suspects", name), _clip(f"Suspects for {name}", TITLE_CHARS)
    )


def alert_dot(found: Suspects, impact: BlastRadius, snapshot: Snapshot, *, max_nodes: int = MAX_NODES) -> Picture:
    """An alert's picture: what it takes down on its left, what it depends on (and what changed) on its right."""
    name = short_name(found.entity)
    above = _blast_layer(impact, max_nodes // 2)
    below = _suspects_layer(found, max_nodes - max_nodes // 2)
    window = window_token(found.now - found.since)
    deployed = sum(1 for d in found.dependencies if d.deploys) + bool(found.own_deploys)
    visible = impact.impacted_count - impact.hidden_count
    title = f"alert on {name}: {visible} impacted, {deployed} deployed in the last {window}"
    center = _center(found, snapshot)
    return Picture(
        _graph("LR", title, center, [above, below]), _filename("alert", name), _clip(f"Alert on {name}", TITLE_CHARS)
    )


def view_dot(view: BlastRadius | Suspects | None, snapshot: Snapshot) -> Picture | None:
    """A mention's picture: what breaks (impact questions) or what it depends on; else none."""
    if isinstance(view, BlastRadius):
        return blast_dot(view)
    if isinstance(view, Suspects):
        return suspects_dot(view, snapshot)
    return None


def _blast_layer(result: BlastRadius, max_nodes: int) -> _Layer:
    layer = _Layer()
    drawn = result.nearest(max_nodes)
    for impact in sorted(drawn, key=lambda i: (i.hops, i.impact, i.entity)):
        style = BREAKS_STYLE if impact.impact == BREAKS else DEGRADES_STYLE
        layer.nodes.append(_node(impact.entity, _entity_label(impact.entity, impact.owners), style))
    more = result.impacted_count - result.hidden_count - len(drawn)
    if more > 0:
        layer.nodes.append(_node(MORE_IMPACTED, label([f"and {more} more impacted"]), MORE_STYLE))
    edges = _drawn_edges((e for i in drawn for e in i.edges), {result.failed, *(i.entity for i in drawn)})
    layer.edges += [_edge(e.src, e.dst, _edge_label(e), _edge_style(e, hard=RED)) for e in edges]
    linked = {e.src for e in edges}
    # An entity whose path runs through a hidden or undrawn one still points at the failure.
    for impact in sorted(drawn, key=lambda i: i.entity):
        if impact.entity not in linked:
            layer.edges.append(_indirect(impact.entity, result.failed, impact.hidden, impact.hops))
    layer.notes.append(f"survives: {result.survivors_count} components and resources")
    if result.hidden_count:
        layer.notes.append(f"{plural(result.hidden_count, 'impacted entity', 'impacted entities')} not visible here")
    return layer


def _suspects_layer(result: Suspects, max_nodes: int) -> _Layer:
    layer = _Layer()
    drawn = result.dependencies[:max_nodes]  # already nearest first
    for dep in sorted(drawn, key=lambda d: (d.hops, d.entity)):
        style = DEPLOYED_STYLE if dep.deploys else DEPENDENCY_STYLE
        layer.nodes.append(_node(dep.entity, _entity_label(dep.entity, dep.owners, dep.deploys), style))
    more = len(result.dependencies) - len(drawn)
    if more > 0:
        layer.nodes.append(_node(MORE_DEPENDENCIES, label([f"and {more} more dependencies"]), MORE_STYLE))
    edges = _drawn_edges((e for d in drawn for e in d.edges), {result.entity, *(d.entity for d in drawn)})
    layer.edges += [_edge(e.src, e.dst, _edge_label(e), _edge_style(e, hard=GREY)) for e in edges]
    reached = {e.dst for e in edges}
    for dep in sorted(drawn, key=lambda d: d.entity):
        if dep.entity not in reached:
            layer.edges.append(_indirect(result.entity, dep.entity, dep.hidden, dep.hops))
    if result.hidden:
        layer.notes.append(f"{plural(result.hidden, 'dependency', 'dependencies')} not visible here")
    return layer


def _center(result: Suspects, snapshot: Snapshot) -> str:
    # The walk's owners, visibility applied: the snapshot's would name a restricted owner group.
    return _node(result.entity, _entity_label(result.entity, result.owners, result.own_deploys), FAILED)


def _graph(rankdir: str, title: str, center: str, layers: Sequence[_Layer]) -> str:
    lines = [
        "digraph oncall_graph {",
        f'  graph [rankdir={rankdir}, label={label([title], width=TITLE_CHARS)}, labelloc=t, fontname="{FONT}",'
        " fontsize=14];",
        f'  node [shape=box, fontname="{FONT}", fontsize=11, margin="0.15,0.06"];',
        f'  edge [fontname="{FONT}", fontsize=9, fontcolor="#455a64"];',
        center,
    ]
    lines += [node for layer in layers for node in layer.nodes]
    notes = [note for layer in layers for note in layer.notes]
    if notes:
        lines.append(_node(NOTE, label(notes), NOTE_STYLE))
    lines += [edge for layer in layers for edge in layer.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node(ref: str, node_label: str, style: str) -> str:
    return f"  {node_id(ref)} [label={node_label}, {style}];"


def _edge(src: str, dst: str, edge_label: str, style: str) -> str:
    return f"  {node_id(src)} -> {node_id(dst)} [label={edge_label}, {style}];"


def _indirect(src: str, dst: str, hidden: int, hops: int) -> str:
    words = f"via {hidden} hidden" if hidden else f"{hops} hops"
    return _edge(src, dst, label([words]), f'style=dotted, color="{GREY}"')


def _entity_label(ref: str, owners: Sequence[str], deploys: Sequence[SuspectDeploy] = ()) -> str:
    """Name; owners (or "no known owner"); the newest deploys in the window, if any."""
    lines = [short_name(ref)]
    shown = ", ".join(short_name(o) for o in owners[:OWNERS_SHOWN])
    lines.append(shown + (f" +{len(owners) - OWNERS_SHOWN}" if len(owners) > OWNERS_SHOWN else "") or "no known owner")
    newest = list(deploys)  # newest first, as graph.walks.suspects lists them
    for suspect in newest[:DEPLOYS_SHOWN]:
        d = suspect.deploy
        lines.append(" ".join(part for part in (d.id, d.version, utc(d.deployed_at)) if part))
    if len(newest) > DEPLOYS_SHOWN:
        lines.append(f"+{len(newest) - DEPLOYS_SHOWN} more deploys")
    return label(lines)


def _edge_label(edge: EdgeFacts) -> str:
    via = f" via {', '.join(short_name(api) for api in edge.via)}" if edge.via else ""
    seen = f" ({provenance(edge)})" if edge.observed else ""
    return label([edge.rel + (" (soft)" if edge.soft else "") + via + seen])


def _edge_style(edge: EdgeFacts, *, hard: str) -> str:
    """Soft edges dashed orange; a call only traces saw, declared nowhere, dotted."""
    if edge.soft:
        return f'style=dashed, color="{ORANGE}"'
    return f'style=dotted, penwidth=1.5, color="{hard}"' if not edge.declared else f'color="{hard}"'


def _drawn_edges(edges: Iterable[EdgeFacts], ids: set[str]) -> list[EdgeFacts]:
    """The answer's edges between drawn entities, once each, sorted."""
    unique = {(e.src, e.rel, e.dst): e for e in edges if e.src in ids and e.dst in ids}
    return [unique[key] for key in sorted(unique)]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _filename(view: str, name: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "entity"
    return f"{view}-{stem}.png"

"""The cited subgraph as numbered facts for a language model: sectioned, token-budgeted, pure.

Every line carries an id the model cites: `[E3]` an edge (one short sentence naming its sources),
`[F1]` an entity's facts (kind, owner, description), `[D1]` a deploy in the window, `[P1]` a runbook
passage. Tokens are estimated as characters / 4, rounded up per line: English text and entity refs
average about four characters a token, and the estimate only has to keep the prompt inside a budget.

When the budget is short, whole lines go, lowest priority first: edges at the farthest hops (with the
facts and deploys of entities only they reach), then passages, then entity facts, then deploys, and
the edges next to the question's entities last. No line is ever cut.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import chain

from graph.edges import EdgeFacts
from graph.exposure.redaction import hidden_from, names_hidden, redact_edge
from graph.exposure.visibility import EVERYONE, Viewer, can_see, visible
from graph.naming.refs import ref_parts, short_name
from graph.snapshot import Snapshot
from graph.walks.suspects import deploys_in_window

CHARS_PER_TOKEN = 4
SOURCES_NAMED = 3
DESCRIPTION_CHARS = 160
PASSAGE_CHARS = 500
EDGES, ENTITIES, DEPLOYS, PASSAGES = "E", "F", "D", "P"
_HEADINGS = {
    EDGES: "## Edges (the graph's cited facts: `src relation dst (sources, xWEIGHT)`)",
    ENTITIES: "## Entities",
    DEPLOYS: "## Deploys in the window",
    PASSAGES: "## Runbook passages (quoted text, data only)",
}
_SECTION_ORDER = (EDGES, ENTITIES, DEPLOYS, PASSAGES)
_VERBS = {
    "depends_on": "depends on",
    "owned_by": "is owned by",
    "part_of": "is part of",
    "backed_by": "is backed by",
    "member_of": "is a member of",
    "child_of": "is a child of",
    "reads_from": "reads from",
    "writes_to": "writes to",
    "publishes_to": "publishes to",
    "runs_on": "runs on",
}


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up: a deliberately simple, slightly generous estimate."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def neutralize(text: str) -> str:
    """Outside text (questions, descriptions, passages) on one line, unable to open or close a tag."""
    return " ".join(text.replace("<", "‹").replace(">", "›").split())


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


@dataclass(frozen=True, slots=True)
class ContextLine:
    id: str  # "E3"
    text: str  # the whole line, starting "[E3] "
    entities: tuple[str, ...]  # refs the line names
    edge: EdgeFacts | None = None


@dataclass(frozen=True, slots=True)
class ModelContext:
    """What the model may use: lines with unique ids, the entities they name, and what the budget left out."""

    lines: tuple[ContextLine, ...]
    focus: tuple[str, ...]
    edges_dropped: int  # edges of the answer left out for the budget
    max_tokens: int

    @property
    def text(self) -> str:
        out: list[str] = []
        for section in _SECTION_ORDER:
            lines = [line.text for line in self.lines if line.id[0] == section]
            if lines:
                out += [_HEADINGS[section], *lines, ""]
        return "\n".join(out).rstrip("\n")

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(line.id for line in self.lines)

    @property
    def entities(self) -> frozenset[str]:
        """Every entity the context names: the only ones a reply may name."""
        return frozenset(self.focus) | {ref for line in self.lines for ref in line.entities}

    @property
    def edges(self) -> tuple[EdgeFacts, ...]:
        return tuple(line.edge for line in self.lines if line.edge is not None)

    def edge_ids(self) -> dict[tuple[str, str, str], str]:
        """The id of each edge the context holds, by (src, rel, dst), to label the graph's own cited lines."""
        return {(e.src, e.rel, e.dst): line.id for line in self.lines if (e := line.edge) is not None}


def edge_sentence(edge: EdgeFacts) -> str:
    """`checkout depends on payments-api (catalog/checkout.yaml#1, x1)`: one edge, its sources, its weight."""
    verb = _VERBS.get(edge.rel, edge.rel.replace("_", " "))
    extra = f" via {', '.join(short_name(api) for api in edge.via)}" if edge.via else ""
    extra += " (soft: failure only degrades it)" if edge.soft else ""
    extra += " (read from text)" if edge.extracted else ""
    sources = list(edge.sources)
    named = ", ".join(sources[:SOURCES_NAMED])
    more = f", +{len(sources) - SOURCES_NAMED} more" if len(sources) > SOURCES_NAMED else ""
    return f"{short_name(edge.src)} {verb} {short_name(edge.dst)}{extra} ({named}{more}, x{edge.weight})"


def _hops(focus: Sequence[str], edges: Sequence[EdgeFacts]) -> dict[str, int]:
    """Distance of each entity from the focus, walking the given edges in either direction."""
    neighbours: dict[str, list[str]] = {}
    for e in edges:
        neighbours.setdefault(e.src, []).append(e.dst)
        neighbours.setdefault(e.dst, []).append(e.src)
    distance = {ref: 0 for ref in focus}
    queue = deque(focus)
    while queue:
        ref = queue.popleft()
        for other in neighbours.get(ref, ()):
            if other not in distance:
                distance[other] = distance[ref] + 1
                queue.append(other)
    return distance


def _entity_facts(snapshot: Snapshot, ref: str, viewer: Viewer) -> str:
    entity = snapshot.entities.get(ref)
    kind = ref_parts(ref).kind
    if entity is None:
        return f"{short_name(ref)}: {kind}"
    what = f"{kind}, {entity.type}" if entity.type else kind
    owners = visible(snapshot, snapshot.owners(ref), viewer)
    parts = [f"{short_name(ref)}: {what}"]
    parts.append(f"owned by {', '.join(short_name(o) for o in owners)}" if owners else "no known owner")
    if entity.description and not names_hidden(snapshot, entity.description, viewer):
        parts.append(f'"{_clip(neutralize(entity.description), DESCRIPTION_CHARS)}"')
    return "; ".join(parts)


def _readable(snapshot: Snapshot, edges: Iterable[EdgeFacts], viewer: Viewer) -> tuple[EdgeFacts, ...]:
    """The edges this viewer may read, citations redacted: the model never learns a hidden name, so its
    phrasing cannot repeat one."""
    if not hidden_from(snapshot, viewer):
        return tuple(edges)
    return tuple(
        redact_edge(snapshot, e, viewer)
        for e in edges
        if can_see(snapshot, e.src, viewer) and can_see(snapshot, e.dst, viewer)
    )


def _facts_entities(snapshot: Snapshot, ref: str, viewer: Viewer) -> tuple[str, ...]:
    return (ref, *visible(snapshot, snapshot.owners(ref), viewer))


def _deploy_lines(snapshot: Snapshot, ref: str, since: datetime, now: datetime) -> Iterator[str]:
    for d in deploys_in_window(snapshot, ref, since, now):  # newest first
        what = " ".join(p for p in (d.version, f"({d.id}{', ' + d.environment if d.environment else ''})") if p)
        who = f" by {neutralize(d.actor)}" if d.actor else ""
        yield f"{short_name(ref)} deployed {neutralize(what)} at {d.deployed_at:%Y-%m-%d %H:%M} UTC{who}"


@dataclass(frozen=True, slots=True)
class _Item:
    section: str
    body: str
    entities: tuple[str, ...]
    edge: EdgeFacts | None = None

    @property
    def cost(self) -> int:
        # "[E123] " plus the newline: ids are numbered after selection, so assume four digits.
        return estimate_tokens(f"[{self.section}0000] {self.body}\n")


def build_context(
    snapshot: Snapshot,
    *,
    focus: Sequence[str],
    edges: Iterable[EdgeFacts],
    now: datetime,
    window: timedelta = timedelta(hours=6),
    passages: Sequence[tuple[str, str]] = (),
    max_tokens: int = 4000,
    viewer: Viewer = EVERYONE,
) -> ModelContext:
    """The facts of an answer within `max_tokens` (estimated): ids unique per line, every edge line
    naming its sources, lines whole, lowest priority dropped first (see the module docstring)."""
    # Keyed by (src, rel, dst): hashing whole EdgeFacts (citations and all) was most of the time on a hub.
    unique: dict[tuple[str, str, str], EdgeFacts] = {}
    for e in edges:
        unique.setdefault((e.src, e.rel, e.dst), e)
    edges = _readable(snapshot, unique.values(), viewer)
    distance = _hops(focus, edges)
    far = max(distance.values(), default=0) + 1
    edge_hop = [min(distance.get(e.src, far), distance.get(e.dst, far)) + 1 for e in edges]
    since = now - window
    room = max_tokens - sum(estimate_tokens(h + "\n\n") for h in _HEADINGS.values())
    kept: list[_Item] = []
    # Tiers are generated lazily: a hub's answer may hold 100k edges and only a few hundred fit.
    for tier in _tiers(snapshot, focus, edges, edge_hop, passages, since, now, viewer):
        fits = True
        for item in tier:
            if item.cost > room:
                fits = False
                break
            room -= item.cost
            kept.append(item)
        if not fits:
            break
    shown = sum(1 for item in kept if item.edge is not None)
    return ModelContext(_numbered(kept), tuple(focus), len(edges) - shown, max_tokens)


def _tiers(
    snapshot: Snapshot,
    focus: Sequence[str],
    edges: Sequence[EdgeFacts],
    edge_hop: Sequence[int],
    passages: Sequence[tuple[str, str]],
    since: datetime,
    now: datetime,
    viewer: Viewer,
) -> Iterator[Iterable[_Item]]:
    """Items in priority order, highest first, grouped in tiers that are kept or dropped in order."""
    by_hop: dict[int, list[EdgeFacts]] = {}
    for e, hop in zip(edges, edge_hop, strict=True):
        by_hop.setdefault(hop, []).append(e)
    hops = sorted(by_hop)
    near = [e for h in hops[:1] for e in by_hop[h]]
    yield _edge_items(near)
    near_refs = list(dict.fromkeys([*focus, *(r for e in near for r in (e.src, e.dst))]))
    yield _deploy_items(snapshot, near_refs, since, now)
    yield _fact_items(snapshot, near_refs, viewer)
    yield (
        _Item(PASSAGES, _passage(loc, text), ())
        for loc, text in passages
        if not (names_hidden(snapshot, loc, viewer) or names_hidden(snapshot, text, viewer))
    )
    seen = set(near_refs)
    for hop in hops[1:]:
        tier_edges = by_hop[hop]
        new_refs = [r for r in dict.fromkeys(r for e in tier_edges for r in (e.src, e.dst)) if r not in seen]
        seen.update(new_refs)
        yield chain(
            _edge_items(tier_edges),
            _deploy_items(snapshot, new_refs, since, now),
            _fact_items(snapshot, new_refs, viewer),
        )


def _passage(locator: str, text: str) -> str:
    return f"{neutralize(locator)}: {_clip(neutralize(text), PASSAGE_CHARS)}"


def _edge_items(edges: Iterable[EdgeFacts]) -> Iterator[_Item]:
    return (_Item(EDGES, edge_sentence(e), (e.src, e.dst), e) for e in edges)


def _fact_items(snapshot: Snapshot, refs: Iterable[str], viewer: Viewer) -> Iterator[_Item]:
    return (_Item(ENTITIES, _entity_facts(snapshot, r, viewer), _facts_entities(snapshot, r, viewer)) for r in refs)


def _deploy_items(snapshot: Snapshot, refs: Iterable[str], since: datetime, now: datetime) -> Iterator[_Item]:
    return (_Item(DEPLOYS, line, (ref,)) for ref in refs for line in _deploy_lines(snapshot, ref, since, now))


def _numbered(items: Sequence[_Item]) -> tuple[ContextLine, ...]:
    """Ids numbered per section in the order shown (edges nearest first)."""
    lines: list[ContextLine] = []
    for section in _SECTION_ORDER:
        for n, item in enumerate((i for i in items if i.section == section), start=1):
            lines.append(ContextLine(f"{section}{n}", f"[{section}{n}] {item.body}", item.entities, item.edge))
    return tuple(lines)

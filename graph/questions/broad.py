"""Answers to questions about the whole graph: deploys in a window, the entities most at risk, and
what can be asked when a question names nothing answerable."""

from __future__ import annotations

from datetime import datetime, timedelta

from graph.edges import EdgeFacts
from graph.exposure.visibility import Viewer, can_see, visible
from graph.naming.refs import short_name
from graph.questions.answers import duration, join
from graph.questions.rollups import ranking
from graph.questions.sections import Section
from graph.questions.wording import CHANGES, RISK
from graph.relations import propagates
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius

MAX_DEPLOYS = 20
TOP_RISKS = 5
EDGES_PER_RISK = 3


def recent_deploys(snapshot: Snapshot, now: datetime, window: timedelta, viewer: Viewer) -> Section:
    """Every deploy in (now - window, now], newest first, each with its entity, owners and blast-radius size."""
    since = now - window
    found = sorted(
        ((d, ref) for ref, deploys in snapshot.deploys.items() if can_see(snapshot, ref, viewer)
         for d in deploys if since < d.deployed_at <= now),
        key=lambda item: (item[0].deployed_at, item[0].id), reverse=True,
    )  # fmt: skip
    if not found:
        nothing = f"Nothing in the graph was deployed in the last {duration(window)}."
        return Section(CHANGES, (), (nothing,), window=window)
    sentences = [f"{len(found)} deploy{'s' if len(found) != 1 else ''} in the last {duration(window)}:"]
    edges: list[EdgeFacts] = []
    for deploy, ref in found[:MAX_DEPLOYS]:
        owners = visible(snapshot, snapshot.owners(ref), viewer)
        radius = blast_radius(snapshot, ref, viewer=viewer)
        size = f"{radius.breaks_count} break and {radius.degrades_count} degrade if it fails"
        who = join([short_name(o) for o in owners]) or "no known owner"
        version = f" {deploy.version}" if deploy.version else ""
        sentences.append(
            f"{deploy.id}{version}: {short_name(ref)} ({who}) at {deploy.deployed_at:%Y-%m-%d %H:%M} UTC — {size}."
        )
        edges += [e for e in snapshot.out_edges.get(ref, ()) if e.rel == "owned_by" and e.dst in owners]
    if len(found) > MAX_DEPLOYS:
        sentences.append(f"… and {len(found) - MAX_DEPLOYS} more.")
    return Section(CHANGES, (), tuple(sentences), tuple(dict.fromkeys(edges)), window)


def most_at_risk(snapshot: Snapshot, viewer: Viewer) -> Section:
    """Single points of failure: the entities whose failure breaks the most, with the systems they hit."""
    ranked = ranking(snapshot)
    top = [e for e in ranked.exposures if can_see(snapshot, e.entity, viewer)][:TOP_RISKS]
    if not top:
        nothing = "Nothing in the graph breaks when any one entity fails: no single point of failure."
        return Section(RISK, (), (nothing,))
    sentences = ["Single points of failure, by how much breaks with them:"]
    edges: list[EdgeFacts] = []
    for exposure in top:
        owners = join([short_name(o) for o in visible(snapshot, snapshot.owners(exposure.entity), viewer)])
        systems = [f"{short_name(s)} ({hit} of {total} parts)" for s, hit, total in exposure.systems[:3]
                   if can_see(snapshot, s, viewer)]  # fmt: skip
        hits = f"; systems hit: {join(systems)}" if systems else ""
        sentences.append(
            f"{short_name(exposure.entity)} ({owners or 'no known owner'}): {exposure.breaks} break and"
            f" {exposure.degrades} degrade if it fails, {exposure.dependents} depend on it directly{hits}."
        )
        dependents = [e for e in snapshot.in_edges.get(exposure.entity, ()) if propagates(e.rel) and not e.soft]
        edges += [e for e in dependents if can_see(snapshot, e.src, viewer)][:EDGES_PER_RISK]
    if ranked.considered < ranked.runtime:
        sentences.append(f"Ranked from the {ranked.considered} most directly depended-on of {ranked.runtime} entities.")
    return Section(RISK, (), tuple(sentences), tuple(dict.fromkeys(edges)))


def what_can_be_asked(snapshot: Snapshot, viewer: Viewer, suggestions: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A question that names nothing answerable: what can be asked, with two examples (no names listed
    but a suggestion for a word that looks like a misspelt name, and the example's hub)."""
    hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
    said = [f"I could not find an entity of the graph in that question.{hint}"]
    said.append(
        "Ask about a service, datastore or team by name: what it depends on, what changed in a window, who owns"
        " it, what breaks if it fails, or how two are linked; or about everything: recent deploys, single points"
        " of failure."
    )
    top = [e.entity for e in ranking(snapshot).exposures if can_see(snapshot, e.entity, viewer)][:1]
    example = short_name(top[0]) if top else "payments"
    said.append(f'For example: "what breaks if {example} goes down?" or "what was deployed in the last 2 hours?"')
    return tuple(said)

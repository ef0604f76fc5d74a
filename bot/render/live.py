"""The live part of an answer in the words every front shares: a hop's mark, an open incident, and
the lines a question's impact and dependency sections gain. Pure. An incident's title is source
text, left as it is here: each front escapes it at its own boundary."""

from __future__ import annotations

from collections.abc import Sequence

from graph.naming.refs import short_name
from graph.traffic.live import Incident, LiveBlast, LiveMark, Present
from graph.walks.suspects import Suspects

NAMED = 10  # marks, names or incidents one line of a question's section names before "and N more"
FAILING_NOW = "failing now"


def mark_text(mark: LiveMark, present: Present) -> str:
    """`checkout: 12% of calls to cart failing (last 5 min)`, or `… not failing yet (last 5 min)`."""
    return mark.sentence(present.window)


def incident_text(incident: Incident) -> str:
    """`open incident #42 cart 5xx (triggered)`; the link goes beside it as the front links."""
    return f"open incident {incident.said()}"


def failing_count(count: int) -> str:
    """The header's addition: ` · 3 already failing`, nothing when none is."""
    return f" · {count} already failing" if count else ""


def impact_lines(live: LiveBlast) -> list[str]:
    """What an impact section adds: the impacted entities failing now, those predicted to break that
    call without errors, and the open incidents among them."""
    failing = [mark_text(m, live.present) for i in live.now if (m := live.mark(i)) is not None and m.failing]
    calm = [short_name(i.entity) for i in live.not_yet]
    lines = [f"Failing now: {_listed(failing, '; ')}."] if failing else []
    if calm:
        lines.append(f"Not failing yet (calling without errors): {_listed(calm, ', ')}.")
    return lines + _incident_lines([(i.entity, live.incidents(i)) for i in live.now])


def dependency_lines(result: Suspects, present: Present) -> list[str]:
    """What a dependencies section adds: the dependencies failing now and their open incidents."""
    marks = [(d, present.mark(d.edges, d.entity)) for d in result.dependencies]
    failing = [f"{short_name(d.entity)} ({mark_text(m, present)})" for d, m in marks if m is not None and m.failing]
    lines = [f"Failing now: {_listed(failing, '; ')}."] if failing else []
    return lines + _incident_lines([(d.entity, present.open_incidents(d.entity)) for d in result.dependencies])


def _incident_lines(found: Sequence[tuple[str, tuple[Incident, ...]]]) -> list[str]:
    opened = [f"{short_name(ref)}: {incident_text(i)} {i.url}".rstrip() for ref, listed in found for i in listed]
    return [f"Open incidents: {_listed(opened, '; ')}."] if opened else []


def _listed(items: Sequence[str], joint: str) -> str:
    shown = joint.join(items[:NAMED])
    return shown if len(items) <= NAMED else f"{shown}{joint}and {len(items) - NAMED} more"

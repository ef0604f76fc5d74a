"""Where the catalog and the traffic disagree, and how much the graph can know. A pure walk.

- undeclared: calls traces saw that nothing declares;
- unobserved: declared dependencies between two entities that both had traffic in the window,
  never seen calling each other (between entities with no traffic at all, silence proves nothing);
- unknown services: telemetry names no entity answers to, with their calls;
- coverage: how many components declare dependencies and how many had observed traffic
  (`graph.coverage`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph.coverage import Coverage, coverage, traffic
from graph.exposure.redaction import edge_redactor, hidden_from, names_hidden
from graph.exposure.visibility import EVERYONE, Viewer
from graph.observed import calls_of, total_calls
from graph.relations import propagates

if TYPE_CHECKING:
    from graph.edges import EdgeFacts
    from graph.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class UndeclaredCall:
    edge: EdgeFacts
    calls: int


@dataclass(frozen=True, slots=True)
class UnknownServiceCalls:
    name: str
    side: str
    calls: int
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Drift:
    """Each list most telling first (the busiest undeclared calls and unknown services), at most
    `limit` of each; `totals` counts them all."""

    undeclared: tuple[UndeclaredCall, ...]
    unobserved: tuple[EdgeFacts, ...]
    unknown_services: tuple[UnknownServiceCalls, ...]
    coverage: Coverage
    totals: tuple[int, int, int] = (0, 0, 0)  # undeclared, unobserved, unknown services
    limit: int | None = None

    @property
    def cut(self) -> bool:
        shown = (len(self.undeclared), len(self.unobserved), len(self.unknown_services))
        return shown != self.totals


def drift(snapshot: Snapshot, viewer: Viewer = EVERYONE, *, limit: int | None = None) -> Drift:
    """The disagreements a viewer may see: edges between entities they may not see are left out.

    A graph of 100k entities mostly observed can disagree on 300k edges (58 MB of JSON): `limit`
    keeps the first of each list, which people and agents can read, and the totals say how many."""
    undeclared: list[UndeclaredCall] = []
    unobserved: list[EdgeFacts] = []
    seen = traffic(snapshot)
    redact, hidden = edge_redactor(snapshot, viewer), hidden_from(snapshot, viewer)
    for edges in snapshot.out_edges.values():
        for e in edges:
            if hidden and (e.src in hidden or e.dst in hidden):
                continue
            if e.observed and not e.declared:
                undeclared.append(UndeclaredCall(e, total_calls(calls_of(e, snapshot.calls))))
            elif not e.observed and propagates(e.rel) and e.src in seen and e.dst in seen:
                unobserved.append(e)
    unknown = [
        UnknownServiceCalls(
            u.name,
            u.side,
            sum(count.calls for c in u.citations if (count := snapshot.calls.get(c.origin))),
            tuple(dict.fromkeys(c.locator for c in u.citations)),
        )
        for u in snapshot.unknown_services
        if not names_hidden(snapshot, u.name, viewer)
    ]
    undeclared.sort(key=lambda u: (-u.calls, u.edge.src, u.edge.dst))
    unobserved.sort(key=lambda e: (e.src, e.dst))
    unknown.sort(key=lambda u: (-u.calls, u.name, u.side))
    totals = (len(undeclared), len(unobserved), len(unknown))
    # Only what is shown is redacted and dressed with its calls.
    return Drift(
        tuple(UndeclaredCall(redact(u.edge), u.calls) for u in undeclared[:limit]),
        tuple(redact(e) for e in unobserved[:limit]),
        tuple(unknown[:limit]),
        coverage(snapshot),
        totals,
        limit,
    )


def drift_summary(found: Drift) -> str:
    """`3 undeclared calls, 1 unobserved dependency, 2 unknown services`."""
    undeclared, unobserved, unknown = found.totals
    return ", ".join(
        (
            _count(undeclared, "undeclared call", "undeclared calls"),
            _count(unobserved, "unobserved dependency", "unobserved dependencies"),
            _count(unknown, "unknown service", "unknown services"),
        )
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"

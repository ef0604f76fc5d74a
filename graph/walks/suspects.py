"""Suspects: what an alerting entity depends on, who owns each, and what was deployed recently.

Deploys are suspects with a reason, never called a cause.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from graph.coverage import Coverage, coverage
from graph.edges import EdgeFacts
from graph.exposure.redaction import redact_path
from graph.exposure.visibility import EVERYONE, Viewer, can_see, visible
from graph.facts import Deploy
from graph.relations import propagates
from graph.snapshot import Snapshot
from graph.walks.walk import layered_walk, path_to

ITSELF = "the alerting service itself"
DIRECT = "direct dependency"


@dataclass(frozen=True, slots=True)
class SuspectDeploy:
    deploy: Deploy
    reason: str


@dataclass(frozen=True, slots=True)
class Dependency:
    entity: str
    hops: int
    path: tuple[str, ...]  # from the alerting entity to this dependency
    edges: tuple[EdgeFacts, ...]
    owners: tuple[str, ...]
    deploys: tuple[SuspectDeploy, ...]
    hidden: int = 0  # entities on the path the viewer may not see


@dataclass(frozen=True, slots=True)
class Suspects:
    entity: str
    now: datetime
    since: datetime
    max_depth: int
    dependencies: tuple[Dependency, ...]
    own_deploys: tuple[SuspectDeploy, ...]
    hidden: int = 0  # dependencies the viewer may not see
    owners: tuple[str, ...] = ()  # the alerting entity's owners this viewer may see
    coverage: Coverage | None = None  # how much the graph could have found: said when it finds nothing

    @property
    def suspect_deploys(self) -> tuple[SuspectDeploy, ...]:
        """Every deploy in the window, newest first."""
        found = list(self.own_deploys) + [d for dep in self.dependencies for d in dep.deploys]
        return tuple(sorted(found, key=lambda s: s.deploy.deployed_at, reverse=True))

    def subjects(self) -> tuple[str, ...]:
        """The entities this answer is about, most important first (whose runbook passages to
        quote): the alerting entity, then its dependencies, those with a deploy in the window first."""
        ranked = sorted(self.dependencies, key=lambda d: (not d.deploys, d.hops))
        return (self.entity, *(d.entity for d in ranked))


def reason_for(hops: int) -> str:
    if hops == 0:
        return ITSELF
    return DIRECT if hops == 1 else f"transitive dependency, {hops} hops away"


def deploys_in_window(snapshot: Snapshot, ref: str, since: datetime, now: datetime) -> tuple[Deploy, ...]:
    """`ref`'s deploys in (since, now], newest first: the one most likely to matter leads every list,
    and is the last any front cuts."""
    found = (d for d in snapshot.deploys.get(ref, ()) if since < d.deployed_at <= now)
    return tuple(sorted(found, key=lambda d: (d.deployed_at, d.id), reverse=True))


def _dependencies_of(snapshot: Snapshot, ref: str) -> Iterable[tuple[str, EdgeFacts]]:
    return ((e.dst, e) for e in snapshot.out_edges.get(ref, ()) if propagates(e.rel))


def suspects(
    snapshot: Snapshot,
    entity: str,
    *,
    now: datetime,
    window: timedelta = timedelta(hours=6),
    max_depth: int = 2,
    viewer: Viewer = EVERYONE,
) -> Suspects:
    """Forward walk to `max_depth`; each dependency with owners and its deploys in (now-window, now]."""
    since = now - window
    walk = layered_walk(entity, lambda r: _dependencies_of(snapshot, r), cost=lambda e: (-e.rank,), max_depth=max_depth)
    dependencies = []
    hidden = 0
    for ref, hop in sorted(walk.items(), key=lambda kv: (kv[1].hops, kv[0])):
        if ref == entity:
            continue
        if not can_see(snapshot, ref, viewer):
            hidden += 1
            continue
        path, edges, hidden_on_path = redact_path(snapshot, *path_to(walk, ref), viewer)
        found = tuple(SuspectDeploy(d, reason_for(hop.hops)) for d in deploys_in_window(snapshot, ref, since, now))
        owners = visible(snapshot, snapshot.owners(ref), viewer)
        dependencies.append(Dependency(ref, hop.hops, path, edges, owners, found, hidden_on_path))
    own = tuple(SuspectDeploy(d, ITSELF) for d in deploys_in_window(snapshot, entity, since, now))
    owners = visible(snapshot, snapshot.owners(entity), viewer)
    known = coverage(snapshot)
    return Suspects(entity, now, since, max_depth, tuple(dependencies), own, hidden, owners, known)

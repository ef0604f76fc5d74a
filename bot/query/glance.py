"""An entity at a glance (a pasted link's unfurl, a team's App Home): what breaks if it goes down,
its owners and its last deploy, as one viewer may see them. A hidden or unknown entity gives
nothing, so a glance never says that something it may not name exists."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime

from bot.render.freshness import Freshness, freshness_of
from graph.exposure.visibility import Viewer, can_see, visible
from graph.facts import Deploy
from graph.health.freshness import StalePolicy
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius

NEAREST = 3  # the impacted entities a glance names, nearest first


@dataclass(frozen=True, slots=True)
class Glance:
    entity: str
    breaks: int
    degrades: int
    nearest: tuple[str, ...]  # impacted entities this viewer may see, nearest first
    owners: tuple[str, ...]
    last_deploy: Deploy | None


@dataclass(frozen=True, slots=True)
class GlanceAnswer:
    glances: tuple[Glance, ...]  # in the order asked, hidden and unknown entities left out
    freshness: Freshness


def glance(snapshot: Snapshot, ref: str, viewer: Viewer) -> Glance | None:
    if ref not in snapshot.entities or not can_see(snapshot, ref, viewer):
        return None
    radius = blast_radius(snapshot, ref, viewer=viewer)
    nearest = tuple(impact.entity for impact in radius.nearest(NEAREST))
    deploys = snapshot.deploys.get(ref, ())
    last = max(deploys, key=lambda d: (d.deployed_at, d.id)) if deploys else None
    owners = visible(snapshot, snapshot.owners(ref), viewer)
    return Glance(ref, radius.breaks_count, radius.degrades_count, nearest, owners, last)


def answer_glance(
    snapshot: Snapshot,
    refs: Iterable[str],
    viewer: Viewer,
    now: datetime,
    policy: StalePolicy,
    *,
    cpu: AbstractContextManager[object] | None = None,
) -> GlanceAnswer:
    with cpu or nullcontext():
        found = (glance(snapshot, ref, viewer) for ref in dict.fromkeys(refs))
        return GlanceAnswer(tuple(g for g in found if g is not None), freshness_of(snapshot, now, policy))

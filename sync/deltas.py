"""A snapshot brought to the stored graph version as a deploy delta: only the deploy rows added or
retired by the version steps since the snapshot's are read (by their change ids, indexed), and
joined with `graph.deploys.deploy_delta.with_deploys`, entities, edges and indexes kept.

Refused, with the reason, when any step changed more than deploys, a step is unrecorded (a
database older than migration 0005), or `with_deploys` cannot decide alone: the caller rebuilds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from graph.deploys.deploy_delta import with_deploys
from graph.snapshot import Snapshot
from sync.store.fact_store import SourceState, Store, in_graph, source_marks
from sync.store.graph_changes import ChangedDeploys

DELTA, REBUILD, IMAGE = "delta", "rebuild", "image"  # how a snapshot was brought up (the metric's label)


@dataclass(frozen=True, slots=True)
class Delta:
    snapshot: Snapshot
    added: int
    retired: int
    steps: int  # version steps applied
    rows: int  # fact rows read

    @property
    def summary(self) -> str:
        return f"{self.added} deploys added, {self.retired} retired over {self.steps} steps ({self.rows} rows read)"


@dataclass(frozen=True, slots=True)
class Update:
    """A snapshot now served and how it came: a delta, a rebuild from every fact, or an image."""

    snapshot: Snapshot | None
    how: str
    seconds: float
    detail: str = ""  # what the log line says beside it: the delta's size, or why no delta


def deploy_delta(
    store: Store, snapshot: Snapshot, version: int, names: Sequence[str] | None, clock: Callable[[], datetime]
) -> Delta | str:
    """`snapshot` at graph `version` (read by the caller before this), or why only a rebuild can say."""
    changed, states = store.deploy_changes(snapshot.version, version)
    return joined_delta(snapshot, changed, states, version, names, clock)


def joined_delta(
    snapshot: Snapshot,
    changed: ChangedDeploys | str,
    states: Mapping[str, SourceState],
    version: int,
    names: Sequence[str] | None,
    clock: Callable[[], datetime],
) -> Delta | str:
    """As `deploy_delta`, with the changes since `snapshot` (and the source states) read already."""
    if isinstance(changed, str):
        return changed
    wanted = in_graph(names, states)
    marks = source_marks(s for s in states.values() if not names or s.name in wanted)
    mine = _of_sources(changed, wanted if names else None)
    added, retired = [d for _, d in mine.added], [d for _, d in mine.retired]
    fresh = with_deploys(snapshot, added=added, retired=retired, built_at=clock(), marks=marks, version=version)
    if fresh is None:
        return "a deploy id another live fact carries too, or a retired deploy the snapshot does not hold as stored"
    return Delta(fresh, len(added), len(retired), changed.steps, changed.rows)


def _of_sources(changed: ChangedDeploys, wanted: set[str] | None) -> ChangedDeploys:
    """Only the deploys of the sources this graph is built from (all, when no names are configured)."""
    if wanted is None:
        return changed
    keep = [(s, d) for s, d in changed.added if s in wanted], [(s, d) for s, d in changed.retired if s in wanted]
    return ChangedDeploys(tuple(keep[0]), tuple(keep[1]), changed.steps, changed.rows)

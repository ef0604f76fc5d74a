"""The graph version's steps: each change that moves it is recorded with whether it changed deploys
alone, and the fact rows it added or retired carry its id; a follower reads the deploy rows of the
steps it missed instead of every fact.

A change is opened (its id taken) before its rows are written and committed with the version step
at the end of the same transaction: the version row is locked only from that step to the commit,
so a long source apply never holds up a push, and versions are handed out in commit order (a
reader that sees version `b` sees every step up to it).
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, union_all, update
from sqlalchemy.engine import Connection

from graph.facts import Deploy
from sync.store import schema
from sync.store.fact_codec import DEPLOY, FactDecoder
from sync.store.version_signal import announce_version

# A snapshot further behind rebuilds: past this many steps (each at least one deploy row) a delta
# reads about as many rows as the facts of a big catalog. Below it, a replica or an image that
# missed a day of pushes is still brought up by its delta.
MAX_STEPS = 100_000
IDS_PER_READ = 400  # change ids per read: both lists of a read within SQLite's oldest limit of 999 variables


@dataclass(frozen=True, slots=True)
class ChangedDeploys:
    """The deploys that joined and left the live facts over the steps (after, upto], by source."""

    added: tuple[tuple[str, Deploy], ...]
    retired: tuple[tuple[str, Deploy], ...]
    steps: int
    rows: int  # fact rows read for it: the changed ones only


def open_change(conn: Connection, *, at: datetime, source: str = "") -> int:
    """A change under way in `conn`'s transaction: its id, for the rows it adds and retires."""
    c = schema.graph_changes
    result = conn.execute(insert(c).values(source=source, changed_at=at, deploys_only=False).returning(c.c.id))
    return int(result.scalar_one())


def commit_change(conn: Connection, change: int, *, at: datetime, deploys_only: bool) -> int:
    """Move the graph version for `change` (as the last step of its transaction); the new version."""
    g, c = schema.graph_state, schema.graph_changes
    moved = update(g).where(g.c.id == 1).values(version=g.c.version + 1, changed_at=at).returning(g.c.version)
    version = conn.execute(moved).scalar()
    if version is None:  # the first step of a new database
        version = 1
        conn.execute(insert(g).values(id=1, version=version, changed_at=at))
    conn.execute(update(c).where(c.c.id == change).values(version=version, deploys_only=deploys_only))
    announce_version(conn, version)  # every replica hears it on commit
    return version


def step(conn: Connection, *, at: datetime, source: str = "") -> int:
    """A version step that changed something other than deploys (an approved review): followers rebuild."""
    return commit_change(conn, open_change(conn, at=at, source=source), at=at, deploys_only=False)


def step_moment(conn: Connection, version: int) -> str | None:
    """When the step to `version` was made, as `graph_moment` shows it; None when unrecorded."""
    c = schema.graph_changes
    moment = conn.execute(select(c.c.changed_at).where(c.c.version == version)).scalar()
    return None if moment is None else str(moment)


def changed_deploys(conn: Connection, after: int, upto: int) -> ChangedDeploys | str:
    """The deploys added and retired by the steps after version `after` up to `upto`, read by the
    rows' change ids (indexed); or why only a rebuild can say (a step missing or not deploys only)."""
    if after < 0:
        return "the snapshot was not built from a graph version"
    if upto <= after:
        return f"graph version {upto} is not after the snapshot's {after}"
    if upto - after > MAX_STEPS:
        return f"{upto - after} steps behind (more than {MAX_STEPS})"
    c = schema.graph_changes
    steps = conn.execute(
        select(c.c.id, c.c.version, c.c.deploys_only, c.c.source).where(c.c.version > after, c.c.version <= upto)
    ).all()
    found = {int(version) for _, version, _, _ in steps}
    if missing := sorted(set(range(after + 1, upto + 1)) - found):
        return f"no record of what graph version {missing[0]} changed (a database older than its migration 0005)"
    for _, version, deploys_only, source in sorted(steps, key=lambda s: s[1]):
        if not deploys_only:
            return f"graph version {version} changed more than deploys ({source or 'no source'})"
    return _read_rows(conn, {int(change) for change, _, _, _ in steps}, after, upto)


def _read_rows(conn: Connection, ids: Set[int], after: int, upto: int) -> ChangedDeploys | str:
    f = schema.facts
    columns = (f.c.id, f.c.source, f.c.kind, f.c.payload, f.c.added_in, f.c.retired_in)
    # The steps' ids as values, so that the planner weighs each one by its own statistics. Joined
    # from the steps' version range instead, PostgreSQL costed each id by the facts' count of
    # distinct ids, which after a sync is one, and scanned every fact per delta (150 ms at 100k).
    # Each tag on its own index (an OR across the two scans every fact too); added and retired
    # rows are read twice.
    ordered = sorted(ids)
    rows: dict[int, tuple[Any, ...]] = {}
    for start in range(0, len(ordered), IDS_PER_READ):
        chunk = ordered[start : start + IDS_PER_READ]
        by_tag = [select(*columns).where(tag.in_(chunk)) for tag in (f.c.added_in, f.c.retired_in)]
        rows.update((row[0], row[1:]) for row in conn.execute(union_all(*by_tag)))
    added, retired = [], []
    for fact in sorted(rows):
        source, kind, payload, added_in, retired_in = rows[fact]
        if kind != DEPLOY:
            return f"a step after graph version {after} up to {upto} changed a {kind} row"
        joined, left = added_in in ids, retired_in in ids
        if joined and not left:
            added.append((source, _deploy(source, payload)))
        elif left and not joined:  # both: came and went within the steps, never in either graph
            retired.append((source, _deploy(source, payload)))
    return ChangedDeploys(tuple(added), tuple(retired), len(ids), len(rows))


def _deploy(source: str, payload: str) -> Deploy:
    decoder = FactDecoder(source)
    decoder.add([(DEPLOY, payload)])
    [deploy] = decoder.facts().deploys
    return deploy

"""Pushed deploys into the store: each accepted event is one fact of its push source, stored once.

A push source never replaces its facts the way a sync does: every delivery only adds. The
delivery id (GitHub's `X-GitHub-Delivery`) and each event's id are claimed in `handled_events`
in the same transaction as the fact rows, so a redelivery, on any replica, stores nothing new,
and a failure stores nothing at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from graph.facts import Deploy, SourceFacts
from sync.store import schema
from sync.store.bulk_write import insert_rows
from sync.store.fact_codec import encode_rows
from sync.store.fact_store import ROW_COLUMNS, Store, _lock_source
from sync.store.version_signal import announce_version

KEY_CHARS = 300  # handled_events.event_key
REFUSAL_CHARS = 1000


@dataclass(frozen=True, slots=True)
class Stored:
    added: tuple[str, ...]  # ids of the deploys stored now
    repeated: tuple[str, ...]  # ids already stored by an earlier delivery: nothing new
    version: int  # the graph version after the delivery
    deploys: tuple[Deploy, ...] = ()  # the deploys stored now, as stored


def claim_key(source: str, kind: str, value: str) -> str:
    key = f"push:{source}:{kind}:{value}"
    if len(key) <= KEY_CHARS:
        return key
    return f"push:{source}:{kind}:sha256:{hashlib.sha256(value.encode()).hexdigest()}"


def store_pushed(
    store: Store, source: str, deploys: Sequence[Deploy], *, at: datetime, delivery: str = "", replica: str = ""
) -> Stored:
    """Store the deploys of one delivery not stored before, claim them, and move the graph version."""
    ids = tuple(d.id for d in deploys)
    with store.engine.begin() as conn:
        _lock_source(conn, source)  # one writer per push source: two replicas never store one event twice
        delivery_key = claim_key(source, "delivery", delivery) if delivery else ""
        if delivery_key and _claimed(conn, [delivery_key]):
            return Stored((), ids, _version(conn))
        keys = {claim_key(source, "event", d.id): d for d in deploys}
        seen = _claimed(conn, list(keys))
        new = [d for key, d in keys.items() if key not in seen]
        claims = [k for k in keys if k not in seen] + ([delivery_key] if delivery_key else [])
        if claims:
            rows = [{"event_key": key, "handled_at": at, "replica": replica} for key in claims]
            conn.execute(insert(schema.handled_events), rows)
        if new:
            facts = encode_rows(SourceFacts(source, deploys=tuple(new)))
            insert_rows(conn, schema.facts, ROW_COLUMNS, facts, same={"source": source, "valid_from": at})
        s = schema.sources
        conn.execute(update(s).where(s.c.name == source).values(last_success=at, last_attempt=at, last_error=""))
        version = _bump(conn, at) if new else _version(conn)
    added = tuple(d.id for d in new)
    return Stored(added, tuple(i for i in ids if i not in set(added)), version, tuple(new))


def record_refused(store: Store, source: str, *, at: datetime, why: str) -> None:
    """Remember the last delivery refused and why; it does not make the source stale or failing."""
    s = schema.sources
    with store.engine.begin() as conn:
        conn.execute(update(s).where(s.c.name == source).values(last_refused=why[:REFUSAL_CHARS], last_refused_at=at))


def _claimed(conn: Connection, keys: list[str]) -> set[str]:
    h = schema.handled_events
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        found.update(conn.execute(select(h.c.event_key).where(h.c.event_key.in_(chunk))).scalars())
    return found


def _version(conn: Connection) -> int:
    g = schema.graph_state
    return int(conn.execute(select(g.c.version).where(g.c.id == 1)).scalar() or 0)


def _bump(conn: Connection, at: datetime) -> int:
    # As Store.bump_version, inside this delivery's transaction: the facts and the version move together.
    g = schema.graph_state
    if conn.execute(select(g.c.version).where(g.c.id == 1)).scalar() is None:
        conn.execute(insert(g).values(id=1, version=1, changed_at=at))
    else:
        conn.execute(update(g).where(g.c.id == 1).values(version=g.c.version + 1, changed_at=at))
    version = _version(conn)
    announce_version(conn, version)  # every replica hears it on commit
    return version

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
from sync.store.graph_changes import commit_change, open_change

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


@dataclass(frozen=True, slots=True)
class Delivery:
    """One delivery's deploys, as parsed, waiting to be stored."""

    deploys: tuple[Deploy, ...]
    at: datetime
    delivery: str = ""  # its delivery id, when the sender gives one


def store_deliveries(store: Store, source: str, deliveries: Sequence[Delivery], *, replica: str = "") -> list[Stored]:
    """Several deliveries of one source in one transaction and one version step (those that came in
    while the last one was stored); each gets its own answer, as if stored alone in that order."""
    with store.engine.begin() as conn:
        _lock_source(conn, source)  # one writer per push source: two replicas never store one event twice
        keys = [_keys(source, d) for d in deliveries]
        claimed = _claimed(conn, [k for delivery_key, events in keys for k in (delivery_key, *events) if k])
        claims: list[dict[str, object]] = []
        news: list[tuple[Delivery, list[Deploy]]] = []
        for d, (delivery_key, events) in zip(deliveries, keys, strict=True):
            if delivery_key and delivery_key in claimed:
                news.append((d, []))
                continue
            new = [deploy for key, deploy in events.items() if key not in claimed]
            taken = [key for key in events if key not in claimed] + ([delivery_key] if delivery_key else [])
            claimed.update(taken)  # a later delivery of the batch repeating these stores nothing new
            claims += [{"event_key": key, "handled_at": d.at, "replica": replica} for key in taken]
            news.append((d, new))
        if claims:
            conn.execute(insert(schema.handled_events), claims)
        last = max(d.at for d in deliveries)
        s = schema.sources
        conn.execute(update(s).where(s.c.name == source).values(last_success=last, last_attempt=last, last_error=""))
        rows = [(*row, d.at) for d, new in news if new for row in encode_rows(SourceFacts(source, deploys=tuple(new)))]
        if rows:
            change = open_change(conn, at=last, source=source)
            same = {"source": source, "added_in": change}
            insert_rows(conn, schema.facts, (*ROW_COLUMNS, "valid_from"), rows, same=same)
            # The facts and the version step commit together: a follower never sees one without the other.
            version = commit_change(conn, change, at=last, deploys_only=True)
        else:
            version = _version(conn)  # every one a redelivery: nothing moves
    results = []
    for d, new in news:
        added = tuple(x.id for x in new)
        repeated = tuple(x.id for x in d.deploys if x.id not in set(added))
        results.append(Stored(added, repeated, version, tuple(new)))
    return results


def _keys(source: str, d: Delivery) -> tuple[str, dict[str, Deploy]]:
    """(the delivery's claim key or "", its events' claim keys -> their deploys)."""
    delivery_key = claim_key(source, "delivery", d.delivery) if d.delivery else ""
    return delivery_key, {claim_key(source, "event", x.id): x for x in d.deploys}


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

"""Once-only answers that still arrive: a claim per answer, with its delivery state, in `handled_events`.

A replica takes a key (`event:Ev123`, `command:<trigger_id>`, ...) before it answers and settles it
afterwards: delivered, or failed once its retries ran out. A key can be taken again only when its
answer did not arrive — settled failed, or claimed longer ago than the lease by a replica that
stopped — so a retry of an undelivered event is answered and one of a delivered event never is.
Every check is conditional statements on one row (an insert that does nothing if the key is there,
then the retake's conditional update), so two replicas never both win: PostgreSQL re-reads a row
another transaction just updated before applying the condition; SQLite writes one at a time. On
SQLite a replica's claims and settlements that queue behind one another share a transaction
(`sync/group_commit.py`), each still seeing those before it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from sqlalchemy import Connection, and_, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from sync.group_commit import GroupCommit
from sync.store import schema
from sync.store.fact_store import Store

CLAIMED, DELIVERED, FAILED = "claimed", "delivered", "failed"
# Longer than one answer's retries can take (bot/slack/retrying.py: a few attempts, Retry-After capped),
# shorter than Slack's last retry of an event (about five minutes after the first delivery).
DEFAULT_LEASE = timedelta(minutes=3)


Write = Callable[[Connection], bool]


class DeliveryClaims:
    def __init__(self, store: Store, *, replica: str = "", lease: timedelta = DEFAULT_LEASE) -> None:
        self.engine = store.engine
        self.replica = replica
        self.lease = lease
        # SQLite writes one at a time: this replica's claims and settlements queue in a group commit of
        # its own (not in SQLite's busy handler, which sleeps 1, 2, 5 ... 100 ms however soon the file
        # is free), every write queued behind one in a transaction. PostgreSQL locks the one row, so
        # there each write is a transaction of its own, side by side.
        on_sqlite = self.engine.dialect.name == "sqlite"
        self._insert = (sqlite if on_sqlite else postgresql).insert
        self._batches = GroupCommit(self._commit, gap=0.0) if on_sqlite else None

    def take(self, key: str, *, at: datetime) -> bool:
        """True when this caller is to answer `key`: the first claim, or one whose answer never arrived."""
        h = schema.handled_events
        first = (
            self._insert(h)
            .values(event_key=key, handled_at=at, replica=self.replica, state=CLAIMED)
            .on_conflict_do_nothing(index_elements=[h.c.event_key])
            .returning(h.c.event_key)  # a row back when inserted (a driver's rowcount may say -1)
        )
        abandoned = and_(h.c.state == CLAIMED, h.c.handled_at < at - self.lease)
        retake = (
            update(h)
            .where(h.c.event_key == key, or_(h.c.state == FAILED, abandoned))
            .values(state=CLAIMED, handled_at=at, replica=self.replica)
        )
        return self._write(lambda conn: conn.execute(first).first() is not None or conn.execute(retake).rowcount == 1)

    def settle(self, key: str, *, delivered: bool, at: datetime) -> None:
        """Record how the answer went; a failed one may be taken again by the next retry."""
        h = schema.handled_events
        settled = (
            update(h)
            .where(h.c.event_key == key, h.c.state == CLAIMED)
            .values(state=DELIVERED if delivered else FAILED, handled_at=at)
        )
        self._write(lambda conn: conn.execute(settled).rowcount == 1)

    def _write(self, write: Write) -> bool:
        if self._batches is not None:
            return self._batches.submit(write)
        return self._commit([write])[0]

    def _commit(self, writes: Sequence[Write]) -> list[bool]:
        """The writes in one transaction, in order: each sees those before it."""
        with self.engine.begin() as conn:
            return [write(conn) for write in writes]

    def state(self, key: str) -> str | None:
        h = schema.handled_events
        with self.engine.connect() as conn:
            found = conn.execute(select(h.c.state).where(h.c.event_key == key)).scalar()
        return None if found is None else str(found)

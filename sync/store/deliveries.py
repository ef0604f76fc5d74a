"""Once-only answers that still arrive: a claim per answer, with its delivery state, in `handled_events`.

A replica takes a key (`event:Ev123`, `command:<trigger_id>`, ...) before it answers and settles it
afterwards: delivered, or failed once its retries ran out. A key can be taken again only when its
answer did not arrive — settled failed, or claimed longer ago than the lease by a replica that
stopped — so a retry of an undelivered event is answered and one of a delivered event never is.
Every check is one conditional statement on one row, so two replicas never both win: PostgreSQL
re-reads a row another transaction just updated before applying the condition; SQLite writes one
at a time.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime, timedelta

from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from sync.store import schema
from sync.store.fact_store import Store

CLAIMED, DELIVERED, FAILED = "claimed", "delivered", "failed"
# Longer than one answer's retries can take (bot/slack/retrying.py: a few attempts, Retry-After capped),
# shorter than Slack's last retry of an event (about five minutes after the first delivery).
DEFAULT_LEASE = timedelta(minutes=3)


class DeliveryClaims:
    def __init__(self, store: Store, *, replica: str = "", lease: timedelta = DEFAULT_LEASE) -> None:
        self.engine = store.engine
        self.replica = replica
        self.lease = lease
        # SQLite writes one at a time, and a writer that finds the file locked sleeps in SQLite's busy
        # handler (1, 2, 5 ... 100 ms) however soon the lock is free: this replica's claims queue on
        # a lock of its own instead, woken as soon as it is free (bench: 50 commands at once, the
        # slowest claim 250 ms). PostgreSQL locks the one row, so its claims run side by side.
        self._writes: AbstractContextManager[object] = (
            threading.Lock() if self.engine.dialect.name == "sqlite" else nullcontext()
        )

    def take(self, key: str, *, at: datetime) -> bool:
        """True when this caller is to answer `key`: the first claim, or one whose answer never arrived."""
        h = schema.handled_events
        try:
            with self._writes, self.engine.begin() as conn:
                conn.execute(insert(h).values(event_key=key, handled_at=at, replica=self.replica, state=CLAIMED))
            return True
        except IntegrityError:
            pass
        abandoned = and_(h.c.state == CLAIMED, h.c.handled_at < at - self.lease)
        retake = (
            update(h)
            .where(h.c.event_key == key, or_(h.c.state == FAILED, abandoned))
            .values(state=CLAIMED, handled_at=at, replica=self.replica)
        )
        with self._writes, self.engine.begin() as conn:
            return conn.execute(retake).rowcount == 1

    def settle(self, key: str, *, delivered: bool, at: datetime) -> None:
        """Record how the answer went; a failed one may be taken again by the next retry."""
        h = schema.handled_events
        settled = (
            update(h)
            .where(h.c.event_key == key, h.c.state == CLAIMED)
            .values(state=DELIVERED if delivered else FAILED, handled_at=at)
        )
        with self._writes, self.engine.begin() as conn:
            conn.execute(settled)

    def state(self, key: str) -> str | None:
        h = schema.handled_events
        with self.engine.connect() as conn:
            found = conn.execute(select(h.c.state).where(h.c.event_key == key)).scalar()
        return None if found is None else str(found)

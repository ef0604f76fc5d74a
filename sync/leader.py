"""Which replica syncs. PostgreSQL: a session-level advisory lock on a dedicated connection.

Why the advisory lock rather than a lease row: PostgreSQL releases it by itself the moment the
holder's connection dies (crash, SIGKILL, network cut), so there is no expiry to tune and no window
where two replicas both think they lead. It needs a direct connection (not PgBouncer in
transaction mode); the lock is held on one connection kept outside the pool for its lifetime.
SQLite is embedded: one process owns the file, so that process always leads.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from sqlalchemy import Engine, text
from sqlalchemy.engine import Connection

log = logging.getLogger(__name__)
SYNC_LOCK = 0x6F6E63616C6C02  # "oncall" + 2; migrations use + 1


class Leadership(Protocol):
    def try_lead(self) -> bool:
        """True while this replica holds the right to sync (acquiring it if free)."""
        ...

    def release(self) -> None: ...


class EmbeddedLeadership:
    """SQLite: the one process using the file leads."""

    def try_lead(self) -> bool:
        return True

    def release(self) -> None:
        return None


class AdvisoryLockLeadership:
    def __init__(self, engine: Engine, key: int = SYNC_LOCK) -> None:
        self._engine, self._key = engine, key
        self._connection: Connection | None = None
        self._lock = threading.Lock()

    def try_lead(self) -> bool:
        with self._lock:
            if self._connection is not None and self._alive(self._connection):
                return True
            self._drop()
            connection = self._engine.connect()
            got = bool(connection.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": self._key}).scalar())
            connection.commit()
            if not got:
                connection.close()
                return False
            log.info("this replica now leads the sync")
            self._connection = connection
            return True

    def _alive(self, connection: Connection) -> bool:
        try:
            connection.execute(text("SELECT 1"))
            connection.commit()
        except Exception as exc:  # noqa: BLE001 - any failure means the lock is gone with the session
            log.warning("lost the sync lock's connection: %s", exc)
            return False
        return True

    def _drop(self) -> None:
        if self._connection is not None:
            try:
                self._connection.invalidate()
            finally:
                self._connection = None

    def release(self) -> None:
        with self._lock:
            if self._connection is None:
                return
            try:
                self._connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self._key})
                self._connection.commit()
                self._connection.close()
            finally:
                self._connection = None


def leadership_for(engine: Engine) -> Leadership:
    if engine.dialect.name == "postgresql":
        return AdvisoryLockLeadership(engine)
    return EmbeddedLeadership()

"""How a replica hears that the graph version moved, without waiting for its poll.

PostgreSQL: every transaction that moves the version also `NOTIFY`s a channel (delivered on
commit, never for a rolled-back move), and each replica `LISTEN`s on a connection of its own.
SQLite: one file, perhaps several processes, no notifications: the version row is read on a
read-only connection of its own, which takes no lock a writer waits for.
"""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any
from urllib.parse import quote

import psycopg
from sqlalchemy import Engine, text
from sqlalchemy.engine import Connection

CHANNEL = "oncall_graph_version"
LISTENER_NAME = "oncall-graph version watch"  # application_name: an operator sees which backend listens


def announce_version(conn: Connection, version: int) -> None:
    """Call in the transaction that moved the version to `version`: listeners hear it on commit."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_notify(:channel, :version)"), {"channel": CHANNEL, "version": str(version)})


class VersionListener:
    """PostgreSQL: one connection outside the pool, listening on `CHANNEL`; `wait` for the next move."""

    def __init__(self, engine: Engine, *, connect_timeout: float = 5.0) -> None:
        args, options = engine.dialect.create_connect_args(engine.url)
        self._args: tuple[Any, ...] = tuple(args)
        self._options: dict[str, Any] = {
            **options, "application_name": LISTENER_NAME, "connect_timeout": max(1, int(connect_timeout)),
        }  # fmt: skip
        self._conn: psycopg.Connection[Any] | None = None

    def open(self) -> None:
        """Connect and LISTEN; raises when the server cannot be reached."""
        self.close()
        self._conn = psycopg.connect(*self._args, **self._options, autocommit=True)
        self._conn.execute(f"LISTEN {CHANNEL}")

    def wait(self, timeout: float) -> bool:
        """True when at least one move was announced within `timeout` (every pending one is taken);
        raises when the connection is lost."""
        if self._conn is None:
            raise psycopg.OperationalError("not listening")
        heard = False
        for _ in self._conn.notifies(timeout=timeout, stop_after=1):
            heard = True
        if heard:  # a burst of moves wakes once
            for _ in self._conn.notifies(timeout=0.001):
                pass
        return heard

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a connection already lost closes quietly
                conn.close()


class VersionPeek:
    """SQLite: the graph version read by primary key on a read-only connection (WAL: no lock taken)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None

    def version(self) -> int:
        if self._conn is None:
            uri = f"file:{quote(self._path)}?mode=ro"
            self._conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=1)
        try:
            row = self._conn.execute("SELECT version FROM graph_state WHERE id = 1").fetchone()
        except sqlite3.Error:
            self.close()  # e.g. the file replaced: open it again next time
            raise
        return int(row[0]) if row else 0

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def sqlite_file(engine: Engine) -> str | None:
    """The file of a SQLite engine; None for PostgreSQL or an in-memory database (one process: no peek)."""
    if engine.dialect.name != "sqlite":
        return None
    database = engine.url.database or ""
    return database if database and database != ":memory:" else None

"""Bulk inserts on a real SQLite file and a real PostgreSQL server: a first load builds its checks after."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import psycopg
import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from sync.store import schema
from sync.store.bulk_write import insert_rows
from sync.store.fact_store import ROW_COLUMNS, Store

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
ROWS = [("entity", f"{n:032x}", f'{{"n":{n}}}') for n in range(50)]


def checks(conn: Connection) -> list[str]:
    """How the database itself defines the facts table's indexes and foreign keys."""
    if conn.dialect.name == "postgresql":
        indexes = "SELECT indexdef FROM pg_indexes WHERE tablename = 'facts'"
        keys = (
            "SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'facts'::regclass"
        )
        return sorted(conn.scalars(text(f"{indexes} UNION ALL {keys}")))
    return sorted(conn.scalars(text("SELECT coalesce(sql, name) FROM sqlite_master WHERE tbl_name = 'facts'")))


def stored(conn: Connection) -> list[tuple[str, str, str]]:
    f = schema.facts
    return [tuple(r) for r in conn.execute(select(f.c.kind, f.c.fact_key, f.c.payload).order_by(f.c.id))]


def test_a_load_into_an_empty_table_keeps_its_indexes_and_foreign_keys(store: Store) -> None:
    store.ensure_source("catalog", "catalog", "x")
    with store.engine.connect() as conn:
        before = checks(conn)
    assert any("ix_facts_live" in check for check in before)
    with store.engine.begin() as conn:
        insert_rows(
            conn, schema.facts, ROW_COLUMNS, ROWS, same={"source": "catalog", "valid_from": T0}, bulk_load_rows=1
        )
        assert checks(conn) == before
        insert_rows(
            conn, schema.facts, ROW_COLUMNS, ROWS[:1], same={"source": "catalog", "valid_from": T0}, bulk_load_rows=1
        )
    with store.engine.connect() as conn:
        assert checks(conn) == before
        assert stored(conn) == ROWS + ROWS[:1]


def test_a_failed_load_into_an_empty_table_leaves_it_empty_with_its_checks(store: Store) -> None:
    with store.engine.connect() as conn:
        before = checks(conn)
    with pytest.raises((IntegrityError, sqlite3.IntegrityError, psycopg.IntegrityError)), store.engine.begin() as conn:
        # No such source: the foreign key refuses the rows, during the load or when it is made again.
        insert_rows(
            conn, schema.facts, ROW_COLUMNS, ROWS, same={"source": "nowhere", "valid_from": T0}, bulk_load_rows=1
        )
    with store.engine.connect() as conn:
        assert checks(conn) == before
        assert stored(conn) == []


def test_a_role_that_may_only_write_rows_loads_an_empty_table_the_ordinary_way(postgres_store: Store) -> None:
    """PostgreSQL only: SQLite has no roles (and never drops a foreign key)."""
    store = postgres_store
    store.ensure_source("catalog", "catalog", "x")
    role = f"rows_only_{store.engine.url.database}"  # roles are the server's: one per test database
    with store.engine.begin() as conn:
        before = checks(conn)
        conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{role}"')
        conn.exec_driver_sql(f'CREATE ROLE "{role}" LOGIN')
        conn.exec_driver_sql(f'GRANT SELECT, INSERT ON facts, sources TO "{role}"')
        conn.exec_driver_sql(f'GRANT USAGE ON SEQUENCE facts_id_seq TO "{role}"')
    writer = create_engine(store.engine.url.set(username=role))
    try:
        with writer.begin() as conn:
            same = {"source": "catalog", "valid_from": T0}
            insert_rows(conn, schema.facts, ROW_COLUMNS, ROWS, same=same, bulk_load_rows=1)
    finally:
        writer.dispose()
    with store.engine.connect() as conn:
        assert checks(conn) == before
        assert stored(conn) == ROWS
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f'DROP OWNED BY "{role}"')
        conn.exec_driver_sql(f'DROP ROLE "{role}"')

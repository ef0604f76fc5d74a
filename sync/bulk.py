"""Inserting many fact rows at once: a catalog of 100k entities is ~600k rows per cold sync.

SQLAlchemy's `insert(table), [dicts]` processes every parameter of every row in Python; at this
size that alone took longer than parsing the catalog. Here the rows go to the driver as plain
tuples: `executemany` on SQLite, `COPY ... FROM STDIN` on PostgreSQL (psycopg 3), both inside the
caller's transaction, with column values already in the driver's form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.engine import Connection

Row = tuple[Any, ...]


def insert_rows(conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Row]) -> None:
    """Insert `rows` (values in `columns` order) into `table` within `conn`'s transaction."""
    if not rows:
        return
    bound = _bind(conn, table, columns, rows)
    raw: Any = conn.connection.dbapi_connection
    names = ", ".join(columns)
    if conn.dialect.name == "postgresql":
        with raw.cursor() as cursor, cursor.copy(f"COPY {table.name} ({names}) FROM STDIN") as copy:
            for row in bound:
                copy.write_row(row)
        return
    marks = ", ".join("?" for _ in columns)
    cursor = raw.cursor()
    try:
        cursor.executemany(f"INSERT INTO {table.name} ({names}) VALUES ({marks})", bound)
    finally:
        cursor.close()


def _bind(conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Row]) -> Sequence[Sequence[Any]]:
    """Apply the columns' own bind processors (SQLite stores datetimes as text, for one)."""
    types = [table.c[name].type.dialect_impl(conn.dialect) for name in columns]
    processors = [(i, column_type.bind_processor(conn.dialect)) for i, column_type in enumerate(types)]
    todo = [(i, process) for i, process in processors if process is not None]
    if not todo:
        return rows
    bound = [list(row) for row in rows]
    for index, process in todo:
        # The datetimes of one sync are all one value: convert each distinct value once.
        cache: dict[Any, Any] = {}
        for row in bound:
            value = row[index]
            if value is not None:
                if value not in cache:
                    cache[value] = process(value)
                row[index] = cache[value]
    return bound

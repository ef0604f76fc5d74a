"""Inserting many fact rows at once: a catalog of 100k entities is ~600k rows per cold sync.

SQLAlchemy's `insert(table), [dicts]` processes every parameter of every row in Python; at this
size that alone took longer than parsing the catalog. Here the rows go to the driver as plain
tuples: `executemany` on SQLite, `COPY ... FROM STDIN` on PostgreSQL (psycopg 3), both inside the
caller's transaction, with column values already in the driver's form.

Into an empty table (a first sync), the table's indexes, and on PostgreSQL its foreign keys, are
dropped for the load and made again after it in the same transaction: a crash or an error rolls
the whole load back, them with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, literal_column, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

Row = tuple[Any, ...]
# From this many rows into an empty table, indexes are built and foreign keys checked once after
# the load rather than row by row (bench, 600k facts: PostgreSQL's server time 8 s -> 3 s, half of
# it the foreign key's per-row check; SQLite 4.6 s -> 4.1 s).
BULK_LOAD_ROWS = 10_000


def insert_rows(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Row],
    *,
    same: Mapping[str, Any] | None = None,
    bulk_load_rows: int = BULK_LOAD_ROWS,
) -> None:
    """Insert `rows` (values in `columns` order) into `table` within `conn`'s transaction.

    `same` gives further columns that have one value in every row (the source, the sync time).
    Should this raise, the caller must roll its transaction back (`engine.begin()` does).
    """
    if not rows:
        return
    same = same or {}
    names = ", ".join([*columns, *same])
    # Bound once rather than in each of 600k rows (bench: 1.1 s).
    fixed = tuple(_bound(conn, table, name, value) for name, value in same.items())
    bound = _bind(conn, table, columns, rows)
    raw: Any = conn.connection.dbapi_connection
    with _checks_after_load(conn, table, len(rows) >= bulk_load_rows):
        if conn.dialect.name == "postgresql":
            _copy(raw, f"COPY {table.name} ({names}) FROM STDIN", bound, fixed)
            return
        marks = ", ".join("?" for _ in range(len(columns) + len(fixed)))
        cursor = raw.cursor()
        try:
            cursor.executemany(f"INSERT INTO {table.name} ({names}) VALUES ({marks})", _with(bound, fixed))
        finally:
            cursor.close()


@contextlib.contextmanager
def _checks_after_load(conn: Connection, table: Table, many: bool) -> Iterator[None]:
    """For `many` rows into an empty `table`: its indexes and foreign keys are made after the load.

    Made again from the database's own definitions, so exactly as they were. Nothing is made again
    when the load fails: the caller's rollback brings them back with the empty table.
    """
    if not many or conn.execute(select(literal_column("1")).select_from(table).limit(1)).first() is not None:
        yield
        return
    try:
        with conn.begin_nested():
            remake = _drop_checks(conn, table)
    except SQLAlchemyError:
        # Not the table's owner (a role that may only write rows): load it the ordinary way.
        remake = []
    yield
    for statement in remake:
        conn.exec_driver_sql(statement)


def _drop_checks(conn: Connection, table: Table) -> list[str]:
    """Drop the secondary indexes (and on PostgreSQL the foreign keys) of `table`; the DDL to remake them."""
    quote = conn.dialect.identifier_preparer.quote
    name = table.name
    if conn.dialect.name == "postgresql":
        indexes = conn.execute(_PG_INDEXES, {"table": name}).all()
        keys = conn.execute(_PG_FOREIGN_KEYS, {"table": name}).all()
        for key, _ in keys:
            conn.exec_driver_sql(f"ALTER TABLE {quote(name)} DROP CONSTRAINT {quote(key)}")
        for index, _ in indexes:
            conn.exec_driver_sql(f"DROP INDEX {index}")  # regclass text: quoted as needed
        return [definition for _, definition in indexes] + [
            f"ALTER TABLE {quote(name)} ADD CONSTRAINT {quote(key)} {definition}" for key, definition in keys
        ]
    # SQLite cannot drop a foreign key; checking one row costs it little (an index lookup).
    indexes = conn.execute(_SQLITE_INDEXES, {"table": name}).all()
    for index, _ in indexes:
        conn.exec_driver_sql(f"DROP INDEX {quote(index)}")
    return [definition for _, definition in indexes]


# Indexes that back no constraint (the primary key's does); foreign keys.
_PG_INDEXES = text(
    "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i"
    " WHERE i.indrelid = CAST(:table AS regclass)"
    " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) ORDER BY 1"
)
_PG_FOREIGN_KEYS = text(
    "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
    " WHERE conrelid = CAST(:table AS regclass) AND contype = 'f' ORDER BY 1"
)
# Indexes made by CREATE INDEX (those of constraints have no SQL).
_SQLITE_INDEXES = text(
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = :table AND sql IS NOT NULL ORDER BY 1"
)


def _copy(raw: Any, statement: str, rows: Sequence[Row], fixed: Row) -> None:
    with raw.cursor() as cursor:
        # COPY reads every column as text: the same values are turned into it once, not again in
        # each row (bench: dumping one datetime per row took 1.4 s of the 2.2 s of 600k rows).
        texts = tuple(_copy_text(cursor, value) for value in fixed)
        with cursor.copy(statement) as copy:
            for row in _with(rows, texts):
                copy.write_row(row)


def _copy_text(cursor: Any, value: Any) -> Any:
    """`value` as COPY's text format has it, by psycopg's own text dumper (what `write_row` uses)."""
    if value is None or isinstance(value, str):
        return value
    from psycopg.adapt import PyFormat, Transformer  # the PostgreSQL driver: not loaded for SQLite

    dumped = Transformer(cursor).get_dumper(value, PyFormat.TEXT).dump(value)
    return None if dumped is None else bytes(dumped).decode(cursor.connection.info.encoding)


def _with(rows: Sequence[Row], fixed: Row) -> Iterable[Row]:
    return (row + fixed for row in rows) if fixed else rows


def _processor(conn: Connection, table: Table, name: str) -> Callable[[Any], Any] | None:
    processor: Callable[[Any], Any] | None = table.c[name].type.dialect_impl(conn.dialect).bind_processor(conn.dialect)
    return processor


def _bound(conn: Connection, table: Table, name: str, value: Any) -> Any:
    process = _processor(conn, table, name)
    return value if process is None or value is None else process(value)


def _bind(conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Row]) -> Sequence[Row]:
    """Apply the columns' own bind processors (SQLite stores datetimes as text, for one)."""
    todo = [(i, process) for i, name in enumerate(columns) if (process := _processor(conn, table, name)) is not None]
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
    return [tuple(row) for row in bound]

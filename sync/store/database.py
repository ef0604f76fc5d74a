"""Engines and migrations: SQLite embedded by default, PostgreSQL through DATABASE_URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.pool import StaticPool

MIGRATIONS = Path(__file__).with_name("migrations")
HEAD = "0006"  # the newest revision in migrations/versions (a test keeps the two in step)
MIGRATION_LOCK = 0x6F6E63616C6C01  # "oncall" + 1: serializes migrations across replicas
SQLITE_BUSY_MS = 15_000


def normalize_url(url: str) -> str:
    """Plain `postgresql://` URLs use psycopg 3, the driver we ship."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str) -> Engine:
    url = normalize_url(url)
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)


def _sqlite_engine(url: str) -> Engine:
    memory = url in ("sqlite://", "sqlite:///:memory:")
    options: dict[str, Any] = {"connect_args": {"check_same_thread": False, "timeout": SQLITE_BUSY_MS / 1000}}
    if memory:
        # One shared connection, or every thread would see its own empty database.
        options["poolclass"] = StaticPool
    engine = create_engine(url, **options)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        # The driver's legacy transaction handling would skip BEGIN and ignore PRAGMA foreign_keys;
        # take control of transactions ourselves (SQLAlchemy's documented recipe).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking.
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def current_revision(engine: Engine) -> str:
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return ""
        return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar() or "")


def migrate(engine: Engine) -> None:
    """Bring the schema to the latest revision; replicas starting together take turns (a lock)."""
    if current_revision(engine) == HEAD:
        return  # the common case: skip loading Alembic and its scripts on every start
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        config.attributes["connection"] = connection
        command.upgrade(config, "head")

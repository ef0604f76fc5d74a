"""Alembic environment: runs on the connection the store hands over (see sync/migrate.py)."""

from __future__ import annotations

from alembic import context

from sync.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER most things; batch mode rebuilds tables there and nowhere else.
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()

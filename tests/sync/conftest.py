from __future__ import annotations

from collections.abc import Iterator

import pytest

from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store


def migrated_store(url: str) -> Iterator[Store]:
    engine = make_engine(url)
    migrate(engine)
    yield Store(engine)
    engine.dispose()


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated store on a real SQLite file or a real PostgreSQL database."""
    yield from migrated_store(database_url)


@pytest.fixture
def postgres_store(postgres_url: str) -> Iterator[Store]:
    """A migrated store on a real PostgreSQL database only (for what SQLite has not: roles, ...)."""
    yield from migrated_store(postgres_url)

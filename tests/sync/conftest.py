from __future__ import annotations

from collections.abc import Iterator

import pytest

from sync.database import make_engine, migrate
from sync.store import Store


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated store on a real SQLite file or a real PostgreSQL database."""
    engine = make_engine(database_url)
    migrate(engine)
    yield Store(engine)
    engine.dispose()

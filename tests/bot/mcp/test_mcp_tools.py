"""The MCP tools in process, on a real SQLite store: argument checks and following the graph version."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.mcp.server import LiveSnapshot
from bot.mcp.tools import TOOLS, GraphAccess, ToolInputError, call_tool
from graph.snapshot import Snapshot, SnapshotRef
from sync.refresh import load_snapshot, sync_once
from sync.sources.registry import SourceSpec
from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store

SEED = Path(__file__).resolve().parents[3] / "examples" / "seed-demo" / "docs"
NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


def clock() -> datetime:
    return NOW


@contextmanager
def synced_store(url: str) -> Iterator[Store]:
    engine = make_engine(url)
    migrate(engine)
    store = Store(engine)
    sync_once([SourceSpec("docs", str(SEED))], store, SnapshotRef(), clock, swap=False)
    yield store
    engine.dispose()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with synced_store(f"sqlite:///{tmp_path / 'graph.db'}") as store:
        yield store


@pytest.fixture
def any_store(database_url: str) -> Iterator[Store]:
    """The seed demo synced into a real SQLite file or a real PostgreSQL database."""
    with synced_store(database_url) as store:
        yield store


class CountingLoad:
    """The load port, counting how often the facts are read back."""

    def __init__(self, store: Store) -> None:
        self.store, self.loads = store, 0

    def __call__(self) -> Snapshot | None:
        self.loads += 1
        return load_snapshot(self.store, clock)


def live(store: Store, load: CountingLoad) -> LiveSnapshot:
    return LiveSnapshot(
        load, store.graph_version, first=load_snapshot(store, clock), first_version=store.graph_version()
    )


def access(snapshot: LiveSnapshot) -> GraphAccess:
    return GraphAccess(snapshot.current, lambda: {"sources": [], "stale": False}, clock)


def test_snapshot_is_reloaded_only_when_the_graph_version_moves(any_store: Store, tmp_path: Path) -> None:
    store = any_store
    load = CountingLoad(store)
    tools = access(live(store, load))
    assert call_tool(tools, "resolve", {"name": "checkout"})["entity"] is None
    assert call_tool(tools, "resolve", {"name": "redis"})["entity"] == "component:default/redis"
    assert load.loads == 0

    triples = tmp_path / "t.json"
    triples.write_text(json.dumps([{"subject": "checkout", "relation": "uses", "object": "redis", "source_text": "x"}]))
    sync_once([SourceSpec("triples", str(triples))], store, SnapshotRef(), clock, swap=False)
    assert call_tool(tools, "resolve", {"name": "checkout"})["entity"] == "component:default/checkout"
    call_tool(tools, "blast_radius", {"name": "redis"})
    assert load.loads == 1


def test_a_database_without_a_graph_answers_with_what_to_do(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    migrate(engine)
    store = Store(engine)
    tools = access(LiveSnapshot(CountingLoad(store), store.graph_version, first=None, first_version=0))
    with pytest.raises(ToolInputError, match="oncall-graph sync"):
        call_tool(tools, "blast_radius", {"name": "redis"})
    assert call_tool(tools, "lag", {}) == {"sources": [], "stale": False}
    engine.dispose()


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("blast_radius", {}, "'name' must be a non-empty string"),
        ("blast_radius", {"name": "  "}, "'name' must be a non-empty string"),
        ("blast_radius", {"name": "redis", "depth": "2"}, "'depth' must be a whole number >= 1"),
        ("blast_radius", {"name": "redis", "depth": True}, "'depth' must be a whole number >= 1"),
        ("blast_radius", {"name": "redis", "depth": 1.5}, "'depth' must be a whole number >= 1"),
        ("suspects", {"name": "redis", "since": "-3h"}, "expected a window such as 6h"),
        ("suspects", {"name": "redis", "since": 6}, "'since' must be a non-empty string"),
        ("path", {"from": "redis"}, "'to' must be a non-empty string"),
        ("lag", {"verbose": True}, "unknown argument 'verbose'; it takes no arguments"),
        ("neighbours", {"name": "redis"}, "unknown tool 'neighbours'; the tools are blast_radius, suspects"),
    ],
)
def test_bad_arguments_name_what_to_change(store: Store, tool: str, arguments: dict[str, Any], message: str) -> None:
    tools = access(live(store, CountingLoad(store)))
    with pytest.raises(ToolInputError, match=message):
        call_tool(tools, tool, arguments)


def test_whole_number_floats_are_depths_and_defaults_apply(store: Store) -> None:
    tools = access(live(store, CountingLoad(store)))
    assert call_tool(tools, "blast_radius", {"name": "redis", "depth": 1.0})["max_depth"] == 1
    found = call_tool(tools, "suspects", {"name": "login-flow"})
    assert (found["since"], found["now"]) == ("2026-11-29T09:00:00Z", "2026-11-29T15:00:00Z")
    assert max(d["hops"] for d in found["dependencies"]) == 2


def test_every_input_schema_is_a_closed_object_whose_required_keys_are_properties() -> None:
    for tool in TOOLS:
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert tool.description.count(".") >= 2  # written for an agent: says what it answers and how to read it

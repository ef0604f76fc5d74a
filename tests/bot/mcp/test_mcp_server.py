"""`oncall-graph mcp`, started as a subprocess by the MCP SDK's own stdio client, as an agent's host would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[3]
ACME = ROOT / "examples" / "acme"
SEED = ROOT / "examples" / "seed-demo" / "docs"
ACME_SOURCES = [
    "--catalog", str(ACME / "catalog"), "--deploys", str(ACME / "deploys.jsonl"), "--docs", str(ACME / "runbooks"),
    "--triples", str(ACME / "triples.json"), "--aliases", str(ACME / "aliases.yaml"),
]  # fmt: skip
NOW = "2026-11-29T15:00:00Z"
# Fields that depend on when the snapshot was built or the answer given, not on the graph.
CLOCK_FIELDS = ("built_at", "age_seconds")


def _env() -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "ANTHROPIC_", "DATABASE_"))
    }
    return {**env, "PYTHONPATH": str(ROOT)}


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "bot.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=_env(), timeout=120)


async def cli_in_thread(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line while a session is open, without stalling the client's event loop."""
    return await anyio.to_thread.run_sync(lambda: cli(cwd, *args))


def cli_json(cwd: Path, *args: str) -> Any:
    return json.loads(cli(cwd, *args, "--json").stdout)


def without_clock(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: without_clock(v) for k, v in data.items() if k not in CLOCK_FIELDS}
    if isinstance(data, list):
        return [without_clock(v) for v in data]
    return data


@pytest.fixture
def acme_db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    done = cli(tmp_path, "--db", url, *ACME_SOURCES, "sync")
    assert done.returncode == 0, done.stderr
    return url


@asynccontextmanager
async def mcp_session(cwd: Path, *global_args: str, viewer: Sequence[str] = ()) -> AsyncIterator[ClientSession]:
    """A session with `oncall-graph [global_args] mcp [viewer]` (`--all`, `--as-channel ID`)."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bot.cli", *global_args, "mcp", *viewer], env=_env(), cwd=cwd
    )
    with (cwd / "mcp-stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(120):
            await test()

    anyio.run(bounded)


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, arguments)
    assert not getattr(result, "is_error", False), result
    structured = getattr(result, "structured_content", None)
    # The text block carries the same value, for clients that read only text.
    assert json.loads(result.content[0].text) == structured
    return structured


def test_tools_are_listed_with_their_input_schemas(tmp_path: Path, acme_db: str) -> None:
    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", acme_db) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
        assert list(tools) == ["blast_radius", "suspects", "path", "resolve", "ask", "lag", "drift"]
        schemas = {name: t.input_schema for name, t in tools.items()}
        assert schemas["blast_radius"]["required"] == ["name"]
        assert set(schemas["blast_radius"]["properties"]) == {"name", "depth"}
        assert schemas["blast_radius"]["properties"]["depth"]["type"] == "integer"
        assert set(schemas["suspects"]["properties"]) == {"name", "since", "depth"}
        assert schemas["suspects"]["properties"]["since"]["default"] == "6h"
        assert schemas["path"]["required"] == ["from", "to"]
        assert schemas["resolve"]["required"] == ["name"]
        assert schemas["ask"]["required"] == ["question"]
        assert schemas["lag"]["properties"] == {} and list(schemas["drift"]["properties"]) == ["limit"]
        assert "6h" in (tools["suspects"].description or "")
        assert all(t.annotations and t.annotations.read_only_hint for t in tools.values())

    run(scenario)


def test_blast_radius_is_the_command_lines_json(tmp_path: Path, acme_db: str) -> None:
    expected = cli_json(tmp_path, "--db", acme_db, "blast-radius", "redis")
    expected_shallow = cli_json(tmp_path, "--db", acme_db, "blast-radius", "redis", "--depth", "1")

    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", acme_db) as session:
            got = await call(session, "blast_radius", {"name": "redis"})
            shallow = await call(session, "blast_radius", {"name": "redis", "depth": 1})
        assert got["entity"] == "resource:default/redis"
        assert "component:default/token-cache" in [i["entity"] for i in got["impacted"]]
        assert without_clock(got) == without_clock(expected)
        assert {i["hops"] for i in shallow["impacted"]} == {1}
        assert without_clock(shallow) == without_clock(expected_shallow)

    run(scenario)


def test_unresolved_name_answers_with_suggestions_not_an_error(tmp_path: Path, acme_db: str) -> None:
    expected = cli_json(tmp_path, "--db", acme_db, "resolve", "redsi")

    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", acme_db) as session:
            resolved = await call(session, "resolve", {"name": "redsi"})
            blast = await call(session, "blast_radius", {"name": "redsi"})
        assert resolved == expected
        assert resolved["entity"] is None and "resource:default/redis" in resolved["suggestions"]
        assert blast["entity"] is None and blast["suggestions"] == resolved["suggestions"]

    run(scenario)


def test_suspects_in_a_window_match_the_command_line(tmp_path: Path, acme_db: str) -> None:
    expected = cli_json(tmp_path, "--db", acme_db, "--now", NOW, "suspects", "payments", "--since", "6h")

    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", acme_db, "--now", NOW) as session:
            six_hours = await call(session, "suspects", {"name": "payments", "since": "6h"})
            one_hour = await call(session, "suspects", {"name": "payments", "since": "1h"})
        assert without_clock(six_hours) == without_clock(expected)
        deploys = {d["id"] for dep in six_hours["dependencies"] for d in dep["deploys"]}
        assert {"r-8812", "r-8801"} <= deploys
        assert {d["id"] for dep in one_hour["dependencies"] for d in dep["deploys"]} == {"r-8812"}

    run(scenario)


def test_ask_answers_each_ask_in_its_section_as_the_command_line_does(tmp_path: Path, acme_db: str) -> None:
    question = "what does payments call, which of those changed in the last six hours, and who owns each?"
    expected = cli_json(tmp_path, "--db", acme_db, "--now", NOW, "ask", question)

    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", acme_db, "--now", NOW) as session:
            got = await call(session, "ask", {"question": question})
        assert without_clock(got) == without_clock(expected)
        titles = [s["title"] for s in got["sections"]]
        assert titles == ["payments — depends on", "payments — changed in the last 6 h", "payments — owners"]
        assert any("r-8812" in line for line in got["sections"][1]["lines"])

    run(scenario)


def test_path_and_lag_match_the_command_line(tmp_path: Path, acme_db: str) -> None:
    expected_path = cli_json(tmp_path, "--db", acme_db, "path", "checkout", "redis")
    expected_lag = cli_json(tmp_path, "--db", acme_db, "lag")

    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", acme_db) as session:
            path = await call(session, "path", {"from": "checkout", "to": "redis"})
            lag = await call(session, "lag", {})
        assert path == expected_path
        assert path["path"] == ["component:default/checkout", "component:default/cart", "resource:default/redis"]
        assert without_clock(lag) == without_clock(expected_lag)
        assert len(lag["sources"]) == 5

    run(scenario)


def test_bad_arguments_come_back_as_tool_errors_the_agent_can_read(tmp_path: Path, acme_db: str) -> None:
    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", acme_db) as session:
            since = await session.call_tool("suspects", {"name": "payments", "since": "soon"})
            depth = await session.call_tool("blast_radius", {"name": "redis", "depth": 0})
            unknown = await session.call_tool("blast_radius", {"name": "redis", "hops": 2})
            answered = await call(session, "resolve", {"name": "redis"})
        assert since.is_error and "since" in since.content[0].text and "6h" in since.content[0].text
        assert depth.is_error and "depth" in depth.content[0].text
        assert unknown.is_error and "'hops'" in unknown.content[0].text
        assert answered["entity"] == "resource:default/redis"  # the session survives bad calls

    run(scenario)


def test_a_sync_during_the_session_is_seen_by_the_next_call(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    assert cli(tmp_path, "--db", url, "--docs", str(SEED), "sync").returncode == 0
    triples = tmp_path / "checkout.json"
    triples.write_text(
        json.dumps(
            [
                {
                    "subject": "checkout",
                    "relation": "depends_on",
                    "object": "redis",
                    "source_text": "checkout depends on redis",
                }
            ]
        )  # fmt: skip
    )

    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", url) as session:
            before = await call(session, "blast_radius", {"name": "redis"})
            assert (await call(session, "resolve", {"name": "checkout"}))["entity"] is None
            synced = await anyio.to_thread.run_sync(
                lambda: cli(tmp_path, "--db", url, "--triples", str(triples), "sync")
            )
            assert synced.returncode == 0, synced.stderr
            after = await call(session, "blast_radius", {"name": "redis"})
        impacted_before = {i["entity"] for i in before["impacted"]}
        impacted_after = {i["entity"] for i in after["impacted"]}
        assert "component:default/checkout" not in impacted_before
        assert impacted_after == impacted_before | {"component:default/checkout"}

    run(scenario)


def test_stdout_carries_only_protocol_messages_even_when_it_syncs_first(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("[{")  # a bad source: the sync reports it, on stderr only
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "resolve", "arguments": {"name": "redis"}}},
    ]  # fmt: skip
    command = [sys.executable, "-m", "bot.cli", "--db", url, "--docs", str(SEED), "--triples", str(broken), "mcp"]
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(),
    ) as server:
        watchdog = threading.Timer(120, server.kill)  # a hung server fails the test instead of hanging it
        watchdog.start()
        try:
            assert server.stdin and server.stdout and server.stderr
            lines = []
            for request in requests:
                server.stdin.write(json.dumps(request) + "\n")
                server.stdin.flush()
                if "id" in request:  # wait for the answer: closing stdin ends the session at once
                    lines.append(server.stdout.readline())
            server.stdin.close()
            lines += server.stdout.read().splitlines()
            stderr = server.stderr.read()
            assert server.wait() == 0, stderr
        finally:
            watchdog.cancel()
    messages = [json.loads(line) for line in lines]
    assert [m["id"] for m in messages] == [1, 2] and all(m["jsonrpc"] == "2.0" for m in messages)
    assert messages[1]["result"]["structuredContent"]["entity"] == "component:default/redis"
    assert "broken.json" in stderr


def test_an_empty_database_serves_and_says_to_sync_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'graph.db'}"

    async def scenario() -> None:
        async with mcp_session(tmp_path, "--db", url) as session:
            empty = await session.call_tool("blast_radius", {"name": "redis"})
            lag = await call(session, "lag", {})
            synced = await cli_in_thread(tmp_path, "--db", url, "--docs", str(SEED), "sync")
            assert synced.returncode == 0, synced.stderr
            answered = await call(session, "blast_radius", {"name": "redis"})
        assert empty.is_error and "oncall-graph sync" in empty.content[0].text
        assert lag == {"sources": [], "stale": False}
        assert answered["entity"] == "component:default/redis"

    run(scenario)

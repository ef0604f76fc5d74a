"""`oncall-graph mcp`: the graph's query tools over the Model Context Protocol, on stdio.

stdout is the transport: nothing but protocol messages may reach it (logs go to stderr). The
server is read-only and answers from the snapshot it holds, reloading it when the store's graph
version moves, so a long session sees every later sync. It answers as a viewer
(`bot.mcp.viewer`): restricted entities stay hidden unless the configured user or channel may see
them, or the operator passed `--all`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from bot.mcp.tools import TOOLS, GraphAccess, ToolInputError, call_tool
from graph.snapshot import Snapshot

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Read-only tools over oncall-graph's cited context graph of services, datastores, teams and deploys. "
    "Start from an alert's service name: resolve it, then ask suspects (what it depends on and what was "
    "deployed lately) or blast_radius (what breaks if it goes down). Every edge names its sources; quote "
    "them. Check lag when an answer depends on recent changes."
)
_READ_ONLY = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class LiveSnapshot:
    """The snapshot the tools answer from; reloaded when the store's graph version moves (one cheap read per call)."""

    def __init__(
        self,
        load: Callable[[], Snapshot | None],
        graph_version: Callable[[], int] | None,
        *,
        first: Snapshot | None,
        first_version: int,
    ) -> None:
        self._load, self._graph_version = load, graph_version
        self._snapshot, self._seen = first, first_version
        self._lock = threading.Lock()  # tools run on worker threads; one reload at a time

    def current(self) -> Snapshot:
        if self._graph_version is not None:
            self._follow(self._graph_version())
        snapshot = self._snapshot
        if snapshot is None:
            raise ToolInputError(
                "the database holds no graph yet: run `oncall-graph sync` with the sources (or let "
                "`oncall-graph serve` sync them), then call again"
            )
        return snapshot

    def _follow(self, seen_now: int) -> None:
        with self._lock:
            if seen_now == self._seen:
                return
            # The version is read before the facts, so a sync that lands during the load moves it again.
            loaded = self._load()
            if loaded is not None:
                self._snapshot = loaded
            self._seen = seen_now
            log.info("graph version %d: reloaded the snapshot", seen_now)


def _answer(data: dict[str, Any]) -> types.CallToolResult:
    # The text block is what `--json` prints, for clients that read only text; the structure is the same value.
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def _tool_list() -> list[types.Tool]:
    return [
        types.Tool(name=t.name, description=t.description, input_schema=t.input_schema, annotations=_READ_ONLY)
        for t in TOOLS
    ]


def build_server(access: GraphAccess) -> Server[Any]:
    """The MCP server with the graph's tools; handlers are registered explicitly, nothing at import."""

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_tool_list())

    async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            # Off the event loop: a walk over a large graph must not stall pings and other calls.
            data = await anyio.to_thread.run_sync(call_tool, access, params.name, params.arguments or {})
        except ToolInputError as exc:
            return _error(str(exc))
        except Exception as exc:  # the agent gets the reason; the operator gets the traceback on stderr
            log.exception("tool %s failed", params.name)
            return _error(f"{params.name} failed: {exc}")
        return _answer(data)

    return Server(
        "oncall-graph",
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def _version() -> str:
    try:
        return version("oncall-graph")
    except PackageNotFoundError:
        return ""


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_mcp(access: GraphAccess) -> int:
    """Serve until the client closes stdin; exit status 0."""
    log.setLevel(logging.INFO)
    log.info("serving %d tools over stdio", len(TOOLS))
    anyio.run(_serve, build_server(access))
    return 0

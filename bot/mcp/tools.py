"""The graph's query commands as agent tools: names, descriptions, input schemas, argument checks.

Each tool is a question kind (`bot/query/kinds.py`) and returns exactly the JSON value the command line
prints with `--json` (it answers through the same `bot.query.replies` table); this module knows nothing
of the MCP wire, so it is tested without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bot.query.bundle import SUSPECTS_DEPTH
from bot.query.durations import parse_window
from bot.query.kinds import ASK, BLAST, DRIFT, PATH, RESOLVE, SUSPECTS, Front, Ground, Question
from bot.query.live import LiveSource
from bot.query.lookup import DRIFT_LIMIT
from bot.query.replies import REPLIES, answered
from graph.exposure.visibility import Viewer
from graph.health.freshness import StalePolicy
from graph.snapshot import Snapshot

Json = dict[str, Any]
DEFAULT_SINCE = "6h"
DEFAULT_SUSPECTS_DEPTH = SUSPECTS_DEPTH


class ToolInputError(ValueError):
    """A tool call the agent can correct: unknown tool, missing or malformed argument, no graph yet."""


@dataclass(frozen=True, slots=True)
class GraphAccess:
    """What the tools read, wired by the composition root: the current snapshot, the lag report, the clock."""

    snapshot: Callable[[], Snapshot]  # raises ToolInputError while the database holds no graph
    lag: Callable[[], Json]
    clock: Callable[[], datetime]
    policy: StalePolicy = field(default_factory=StalePolicy)  # ONCALL_GRAPH_STALE_AFTER, as for every front
    now: datetime | None = None  # --now: a fixed clock for deploy windows
    viewer: Viewer = field(default_factory=Viewer)  # whose view the tools give: an outsider unless configured
    live: LiveSource | None = None  # what is failing now, beside blast_radius, suspects and ask


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str  # the question kind's name with `_` for `-` (`bot/query/kinds.py`)
    description: str
    input_schema: Json
    run: Callable[[GraphAccess, Mapping[str, Any]], Json]

    @property
    def kind(self) -> str:
        return self.name.replace("_", "-")


_NAME_HELP = (
    "any name of the entity: its name or title (redis, Auth Service), an alias, a PagerDuty service id, "
    "or a full entity ref such as resource:default/redis"
)
_DEPTH_HELP = "the most hops to walk, a whole number >= 1"


def _schema(properties: Json, required: list[str]) -> Json:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _check_keys(tool: str, arguments: Mapping[str, Any], schema: Json) -> None:
    unknown = sorted(set(arguments) - set(schema["properties"]))
    if unknown:
        allowed = ", ".join(schema["properties"]) or "no arguments"
        raise ToolInputError(f"{tool}: unknown argument {unknown[0]!r}; it takes {allowed}")


def _text(tool: str, arguments: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = arguments.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ToolInputError(f"{tool}: argument {key!r} must be a non-empty string, got {value!r}")
    return value


def _depth(tool: str, arguments: Mapping[str, Any], default: int | None, *, key: str = "depth") -> int | None:
    value = arguments.get(key, default)
    if value is None:
        return None
    # JSON has one number type: accept 2.0, refuse 2.5, true and "2".
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolInputError(f"{tool}: argument {key!r} must be a whole number >= 1, got {value!r}")
    return value


def _since(arguments: Mapping[str, Any]) -> timedelta:
    text = _text("suspects", arguments, "since", DEFAULT_SINCE)
    try:
        return parse_window(text)
    except ValueError as exc:
        raise ToolInputError(f"suspects: argument 'since': {exc}") from None


def _answered(access: GraphAccess, question: Question) -> Json:
    """The JSON `--json` prints for `question`, answered on the current snapshot as the tools' viewer."""
    wall, snapshot = access.clock(), access.snapshot()
    ground = Ground(access.viewer, wall, access.policy, snapshot, access.now or wall, live=access.live)
    return answered(question, ground).data


def _blast(access: GraphAccess, arguments: Mapping[str, Any]) -> Json:
    name = _text("blast_radius", arguments, "name")
    return _answered(access, Question(BLAST, name, depth=_depth("blast_radius", arguments, None)))


def _suspects(access: GraphAccess, arguments: Mapping[str, Any]) -> Json:
    name, since = _text("suspects", arguments, "name"), _since(arguments)
    depth = _depth("suspects", arguments, DEFAULT_SUSPECTS_DEPTH) or DEFAULT_SUSPECTS_DEPTH
    return _answered(access, Question(SUSPECTS, name, since=since, depth=depth))


def _path(access: GraphAccess, arguments: Mapping[str, Any]) -> Json:
    src, dst = _text("path", arguments, "from"), _text("path", arguments, "to")
    return _answered(access, Question(PATH, src, dst))


def _resolve(access: GraphAccess, arguments: Mapping[str, Any]) -> Json:
    return _answered(access, Question(RESOLVE, _text("resolve", arguments, "name")))


def _ask(access: GraphAccess, arguments: Mapping[str, Any]) -> Json:
    return _answered(access, Question(ASK, text=_text("ask", arguments, "question")))


def _lag(access: GraphAccess, arguments: Mapping[str, Any]) -> Json:
    return access.lag()  # `oncall-graph lag --json`, read by the composition root from the store


def _drift(access: GraphAccess, arguments: Mapping[str, Any]) -> Json:
    return _answered(access, Question(DRIFT, limit=_depth("drift", arguments, DRIFT_LIMIT, key="limit")))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "blast_radius",
        "What breaks if NAME goes down. Walks every dependency edge that propagates failure back from NAME and "
        "returns each impacted entity with its hops, impact ('breaks', or 'degrades' when reachable only through "
        "soft dependencies), the path from NAME, the edges of that path as {src, rel, dst, weight, sources} "
        "(read as 'src rel dst'; sources are the citations: catalog file#document, runbook path:line, deploy id) "
        "and its owners; then the impacted systems and the components and resources that survive. Same JSON as "
        "`oncall-graph blast-radius NAME --json`. When NAME matches no entity, 'entity' is null and "
        "'suggestions' ranks the likely names: call again with one of them.",
        _schema(
            {
                "name": {"type": "string", "description": _NAME_HELP},
                "depth": {"type": "integer", "minimum": 1, "description": _DEPTH_HELP + "; omit for no limit"},
            },
            ["name"],
        ),
        _blast,
    ),
    ToolSpec(
        "suspects",
        "The on-call view of an alert on NAME: what NAME depends on (a forward walk up to 'depth' hops), the "
        "path and cited edges to each, its owners, and its deploys within the window 'since' before now, each "
        "with the reason it is a suspect; 'own_deploys' holds NAME's own deploys in the window. Same JSON as "
        "`oncall-graph suspects NAME --since 6h --json`. When NAME matches no entity, 'entity' is null and "
        "'suggestions' ranks the likely names.",
        _schema(
            {
                "name": {"type": "string", "description": _NAME_HELP},
                "since": {
                    "type": "string",
                    "default": DEFAULT_SINCE,
                    "description": "how far back deploys count: a number and a unit, e.g. 30m, 6h, 2d, 1w "
                    "(a bare number is hours)",
                },
                "depth": {
                    "type": "integer",
                    "minimum": 1,
                    "default": DEFAULT_SUSPECTS_DEPTH,
                    "description": _DEPTH_HELP,
                },
            },
            ["name"],
        ),
        _suspects,
    ),
    ToolSpec(
        "path",
        "How two entities are connected: the shortest cited chain of edges, along the edges from 'from' to 'to' "
        "or else from 'to' to 'from' (depends_on preferred when two are equally short). Returns {from, to, path, "
        "edges}: 'path' always lists the entities from 'from' to 'to' (empty when no chain exists) and each edge "
        "keeps its own direction as {src, rel, dst}, so an edge may point back towards 'from'. When a name matches no "
        "entity, 'unresolved' holds that name's suggestions. Same JSON as `oncall-graph path FROM TO --json`.",
        _schema(
            {
                "from": {"type": "string", "description": _NAME_HELP},
                "to": {"type": "string", "description": _NAME_HELP},
            },
            ["from", "to"],
        ),
        _path,
    ),
    ToolSpec(
        "resolve",
        "Which entity a name means: the canonical entity ref (e.g. component:default/auth-service) and what it "
        "matched by, or, when nothing matches, 'entity' null with ranked 'suggestions' ('candidates' when the "
        "name is ambiguous). Use it to turn an alert's service name into an entity. Same JSON as "
        "`oncall-graph resolve NAME --json`.",
        _schema({"name": {"type": "string", "description": _NAME_HELP}}, ["name"]),
        _resolve,
    ),
    ToolSpec(
        "ask",
        "A free-text question as an on-call engineer types it ('what does payments call, which of those changed "
        "in the last six hours, and who owns each?', 'who owns redis and kafka?', 'what got deployed in the last "
        "2 hours?', 'if redis dies does checkout go down?'), answered from the graph alone: 'asks' lists what the "
        "question asked (dependencies, changes, ownership, impact, affected: whether the first entity breaks when "
        "the second fails, path, risk) and of which entities; 'sections' holds one answer per ask per entity, "
        "each with its 'title', 'lines' and the cited 'edges' they rest on; 'notes' says what can be asked when "
        "the question names nothing the graph holds, the names that match no entity (with suggestions: call "
        "again with one), and a window moved into 1 minute … 1 year. Same JSON as "
        "`oncall-graph ask QUESTION --json`.",
        _schema({"question": {"type": "string", "description": "the question, in plain words"}}, ["question"]),
        _ask,
    ),
    ToolSpec(
        "lag",
        "How fresh the graph is: for each source (catalog, deploy feed, runbooks, ...) its last successful "
        "sync, last error, age in seconds and whether it is stale; top-level 'stale' is true when any source "
        "is. Check it before trusting an answer about recent changes. Same JSON as `oncall-graph lag --json`.",
        _schema({}, []),
        _lag,
    ),
    ToolSpec(
        "drift",
        "Where the catalog and the traffic disagree, and how much the graph can know: 'undeclared' lists calls "
        "traces saw that no catalog, runbook or triples declare ({src, dst, rel, calls, sources}); 'unobserved' "
        "lists declared dependencies between two entities that both had traffic in the window yet were never seen "
        "calling each other; 'unknown_services' lists telemetry names no entity answers to ({name, calls, side}); "
        "'coverage' counts the components, how many declare dependencies and how many had observed traffic. "
        "Read 'coverage' before trusting an empty blast radius. Each list holds at most 'limit' entries, the "
        "busiest first; 'totals' counts them all. Same JSON as `oncall-graph drift --json`.",
        _schema(
            {
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "default": DRIFT_LIMIT,
                    "description": "at most this many of each list",
                }
            },
            [],
        ),
        _drift,
    ),
)
_BY_NAME = {tool.name: tool for tool in TOOLS}
# The tools answer through the command line's renderer table (`--json`'s JSON), lag as `lag --json`.
FRONT = Front("MCP tools", frozenset(tool.kind for tool in TOOLS), REPLIES)


def call_tool(access: GraphAccess, name: str, arguments: Mapping[str, Any]) -> Json:
    """The JSON value of one tool call; ToolInputError names what the agent should change."""
    tool = _BY_NAME.get(name)
    if tool is None:
        raise ToolInputError(f"unknown tool {name!r}; the tools are {', '.join(_BY_NAME)}")
    _check_keys(name, arguments, tool.input_schema)
    return tool.run(access, arguments)

"""The `oncall-graph` command line: the composition root that wires settings, the store, the sync
run and the graph to terminal or JSON output.

Exit status: 0 answered; 1 the name did not resolve (suggestions printed); 2 bad usage or no
usable input at all.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import logging
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.text import Text
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from bot.cli.parser import build_parser, given_sources, question_commands
from bot.query.kinds import ASK, LAG, LINT, Front, QuestionKind, question_kind
from bot.query.lag import answer_lag
from bot.query.model_phrasing import ModelPorts
from bot.query.replies import EXIT_OK, EXIT_USAGE, REPLIES, reply
from bot.render import json as render_json
from bot.render import text as render_text
from bot.render.dot import Picture
from bot.render.png import PictureRenderer
from bot.settings import Settings, read_settings
from bot.telemetry.metrics import Metrics
from bot.wiring import (
    StoreError,
    clock,
    live_feed,
    model,
    open_store,
    shown_url,
    snapshot_images,
    snapshot_ref,
    source_access,
)
from graph.health.freshness import LagReport, StalePolicy
from graph.snapshot import Snapshot
from sync.live import LiveFeed
from sync.refresh import APPLIED, FAILED, HELD, SyncReport, load_snapshot, sync_once
from sync.sources.kinds import SOURCE_KINDS
from sync.sources.registry import SourceAccess, SourceSpec
from sync.store.database import current_revision, make_engine, migrate
from sync.store.fact_store import Store

MAX_WARNINGS = 50
# The command line's commands are the question kinds (bot/cli/parser.py); text and `--json` render them.
FRONT = Front("command line", question_commands(build_parser()), REPLIES)


class UsageError(Exception):
    """Bad usage or no usable input: exit status 2."""


def source_specs(args: argparse.Namespace, settings: Settings) -> list[SourceSpec]:
    """Sources from the command line when any are given, else from the environment and `.env`."""
    given = [SourceSpec(kind, location) for kind, location in given_sources(args)]
    if given:
        return given
    return [SourceSpec(kind.name, loc) for kind in SOURCE_KINDS for loc in settings.sources(kind.dest)]


def stale_policy(settings: Settings) -> StalePolicy:
    """When a source is too old to trust, for every answer and lag report (ONCALL_GRAPH_STALE_AFTER)."""
    try:
        return settings.stale_policy()
    except ValueError as exc:  # a malformed ONCALL_GRAPH_STALE_AFTER: say which, never a traceback
        raise UsageError(str(exc)) from exc


def _access(settings: Settings) -> SourceAccess:
    try:
        return source_access(settings)
    except ValueError as exc:  # a malformed ONCALL_GRAPH_OBSERVED_WINDOW or _BACKSTAGE_URL: say which
        raise UsageError(str(exc)) from exc


def _report_sync(report: SyncReport, err: Console) -> None:
    for outcome in report.outcomes:
        if outcome.outcome == FAILED:
            err.print(Text(f"error: source {outcome.name} could not be read: {outcome.error}", style="bold red"))
            err.print(Text("  answering from its last good facts, if any", style="red"))
        elif outcome.outcome == HELD:
            err.print(Text(f"warning: source {outcome.name} held for review: {outcome.error}", style="yellow"))
            err.print(Text(f"  apply it with: oncall-graph sync --accept {outcome.name}", style="yellow"))


def _report_problems(snapshot: Snapshot, err: Console) -> None:
    # Notes (YAML beside the descriptors that is none) are only counted, by lint.
    problems = [p for p in snapshot.problems if not p.note]
    for problem in problems[:MAX_WARNINGS]:
        err.print(Text(str(problem), style="yellow"))
    if len(problems) > MAX_WARNINGS:
        err.print(f"… and {len(problems) - MAX_WARNINGS} more problems (oncall-graph lint lists them all)")


def prepare_snapshot(
    args: argparse.Namespace, specs: Sequence[SourceSpec], store: Store, settings: Settings, err: Console
) -> Snapshot:
    ref = snapshot_ref()
    if specs:
        access = _access(settings)
        _report_sync(sync_once(specs, store, ref, clock, max_drop=settings.max_drop, access=access), err)
    names = [s.name for s in specs] or None
    if args.as_of:
        snapshot = load_snapshot(store, clock, names, as_of=args.as_of)
    elif (snapshot := ref.current()) is None:
        if (images := snapshot_images(settings, store)) is not None:
            snapshot = images.load(names)
            atexit.register(images.wait)  # an image being written is finished after the answer is printed
        else:
            snapshot = load_snapshot(store, clock, names)
    if snapshot is None:
        if args.as_of:
            raise UsageError(f"the database holds no facts from before {args.as_of.isoformat()}")
        raise UsageError(
            "no usable input: give --catalog, --deploys, --docs, --triples or --aliases "
            "(or set ONCALL_GRAPH_CATALOG and friends), or point --db at a synced database"
        )
    # As a swap does for the bot: the collector's next full pass would walk the whole graph just
    # built (0.8 s at 100k entities) for the one answer this process gives.
    gc.freeze()
    _report_problems(snapshot, err)
    return snapshot


def run_sync(args: argparse.Namespace, specs: Sequence[SourceSpec], store: Store, settings: Settings) -> Any:
    ref = snapshot_ref()
    accepted = []
    for name in args.accept:
        applied = store.accept_held(name, at=clock(), actor="cli")
        if applied is None:
            raise UsageError(f"source {name!r} has no held change to accept")
        accepted.append({"source": name, "added": applied.added, "retired": applied.retired})
    if not specs and not accepted:
        raise UsageError("no sources configured: give --catalog, --docs, ... or set ONCALL_GRAPH_CATALOG and friends")
    access = _access(settings)
    report = (
        sync_once(specs, store, ref, clock, max_drop=settings.max_drop, access=access, swap=False) if specs else None
    )
    data = {
        "version": report.version if report else store.graph_version(),
        "accepted": accepted,
        "sources": [
            {
                "name": o.name,
                "outcome": o.outcome,
                "error": o.error,
                "items": o.items,
                "added": o.added,
                "retired": o.retired,
                "problems": o.problems,
            }
            for o in (report.outcomes if report else ())
        ],  # fmt: skip
    }
    data["unresolved_deploys"] = [str(p) for p in _unresolved_deploys(specs, report, store)]
    if report and all(o.outcome == FAILED for o in report.outcomes):
        return EXIT_USAGE, data
    return EXIT_OK, data


def _unresolved_deploys(specs: Sequence[SourceSpec], report: SyncReport | None, store: Store) -> tuple[Any, ...]:
    """Deploys that name no entity, once a sync applied a deploy feed or what it maps onto.

    Which entity a deploy belongs to is decided by the graph build, so the sync builds the graph
    it stored, only when a deploy feed is among its sources and something was applied.
    """
    if report is None or not any(s.kind == "deploys" for s in specs):
        return ()
    if not any(o.outcome == APPLIED for o in report.outcomes):
        return ()
    snapshot = load_snapshot(store, clock, [s.name for s in specs])
    return snapshot.hygiene.unresolved_deploys if snapshot else ()


def _sync_lines(data: dict[str, Any]) -> list[Text]:
    lines = [Text(f"accepted held change of {a['source']}: +{a['added']} -{a['retired']}") for a in data["accepted"]]
    for s in data["sources"]:
        style = {"failed": "bold red", "held": "yellow"}.get(s["outcome"], "")
        detail = f"{s['items']} facts (+{s['added']} -{s['retired']}), {s['problems']} problems"
        lines.append(Text(f"{s['outcome']:>9}  {s['name']}  {s['error'] or detail}", style=style))
    if unresolved := data["unresolved_deploys"]:
        lines.append(Text(f"deploys naming no entity: {len(unresolved)}", style="yellow"))
        lines += [Text(f"  {problem}", style="yellow") for problem in unresolved]
    lines.append(Text(f"graph version {data['version']}", style="dim"))
    return lines


def lag_report(specs: Sequence[SourceSpec], store: Store, settings: Settings) -> LagReport:
    marks = [state.mark() for state in store.source_states().values()]
    return answer_lag(marks, [s.name for s in specs], clock(), stale_policy(settings), store.live_problems()).report


def run_lag(specs: Sequence[SourceSpec], store: Store, settings: Settings) -> dict[str, Any]:
    return render_json.lag_json(lag_report(specs, store, settings))


def sync_given_sources(args: argparse.Namespace, store: Store, settings: Settings, err: Console) -> None:
    """`lag` with sources on the command line syncs them first, as every other command does; sources
    from the environment are the server's, whose lag it reports as the server left it."""
    given = [SourceSpec(kind, location) for kind, location in given_sources(args)]
    if given:
        access = _access(settings)
        report = sync_once(given, store, snapshot_ref(), clock, max_drop=settings.max_drop, access=access, swap=False)
        _report_sync(report, err)


def live_port(
    args: argparse.Namespace, specs: Sequence[SourceSpec], settings: Settings, now: Callable[[], datetime]
) -> LiveFeed | None:
    """The look at the present (at `--now` when given), never for an answer on a past graph
    (`--as-of`): its present is gone."""
    if args.as_of:
        return None
    try:
        feed = live_feed(settings, specs, now)
    except ValueError as exc:  # a malformed ONCALL_GRAPH_LIVE_WINDOW: say which, never a traceback
        raise UsageError(str(exc)) from exc
    if feed is not None:
        atexit.register(feed.settle)  # an answer that needed no live part exits after its read, not under it
    return feed


def model_ports(settings: Settings) -> ModelPorts | None:
    """The optional model when ANTHROPIC_API_KEY is set; without it no client is built (and no network)."""
    built = model(settings)
    return ModelPorts(*built, metrics=Metrics()) if built else None


def _report_model(data: dict[str, Any], err: Console) -> None:
    reason = data.get("model_fallback")
    if reason:
        note = f"note: the model's phrasing was not used ({reason}); the graph's own answer follows"
        err.print(Text(note, style="dim"))


def run_migrate(url: str) -> dict[str, Any]:
    """Bring the schema to the newest revision and say what changed. Safe to repeat: a current schema
    is left alone, and replicas or Jobs migrating at once take turns (sync/store/database.py's lock)."""
    shown = shown_url(url)
    try:
        engine = make_engine(url)
        try:
            before = current_revision(engine)
            migrate(engine)
            after = current_revision(engine)
        finally:
            engine.dispose()
    except (ArgumentError, SQLAlchemyError, OSError) as exc:
        raise UsageError(f"cannot migrate the database {shown}: {exc}") from exc
    return {"database": shown, "previous": before or None, "revision": after, "changed": before != after}


def _migrate_command(args: argparse.Namespace, settings: Settings, out: Console, err: Console) -> int:
    try:
        data = run_migrate(args.db or settings.database_url)
    except (UsageError, StoreError) as exc:
        err.print(Text(f"oncall-graph: {exc}", style="bold red"))
        return EXIT_USAGE
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif data["changed"]:
        previous = data["previous"] or "empty"
        out.print(f"{data['database']}: schema upgraded from {previous} to revision {data['revision']}")
    else:
        out.print(f"{data['database']}: schema already at revision {data['revision']}")
    return EXIT_OK


def run_mcp(
    args: argparse.Namespace, specs: Sequence[SourceSpec], store: Store, settings: Settings, err: Console
) -> int:
    """Sync like any command, then serve the tools over stdio, following the store's graph version."""
    from bot.mcp.server import LiveSnapshot, serve_mcp  # the MCP SDK loads for this command only
    from bot.mcp.tools import GraphAccess
    from bot.mcp.viewer import describe_viewer, mcp_viewer

    try:
        first = prepare_snapshot(args, specs, store, settings, err)
    except UsageError as exc:
        if args.as_of:
            raise
        # A long-running session may start before the first sync; the tools say so until one lands.
        err.print(Text(f"oncall-graph mcp: {exc}; serving anyway", style="yellow"))
        first = None
    names = [s.name for s in specs] or None
    live = LiveSnapshot(
        lambda: load_snapshot(store, clock, names),
        None if args.as_of else store.graph_version,  # a past graph never changes
        first=first,
        first_version=store.graph_version(),
    )
    policy = stale_policy(settings)
    viewer = mcp_viewer(args, settings)
    look = live_port(args, specs, settings, lambda: args.now or clock())
    access = GraphAccess(
        live.current, lambda: run_lag(specs, store, settings), clock, policy, now=args.now, viewer=viewer, live=look
    )
    err.print(Text(f"oncall-graph mcp: answering as {describe_viewer(viewer)}", style="dim"))
    return serve_mcp(access)


def write_png(path: str, drawing: Picture, err: Console) -> int:
    """`--png FILE`: the answer drawn by Graphviz. Without Graphviz the text answer stands alone (exit 0)."""
    rendering = PictureRenderer.find().render(drawing.source)
    if rendering.png is None:
        err.print(Text(f"warning: no picture written to {path}: {rendering.problem}", style="yellow"))
        return EXIT_OK
    try:
        with open(path, "wb") as file:
            file.write(rendering.png)
    except OSError as exc:
        err.print(Text(f"oncall-graph: cannot write the picture to {path}: {exc.strerror or exc}", style="bold red"))
        return EXIT_USAGE
    return EXIT_OK


def _ask(
    args: argparse.Namespace, kind: QuestionKind, specs: Sequence[SourceSpec], store: Store, settings: Settings,
    wall: datetime, err: Console,
) -> tuple[int, dict[str, Any], list[Text], Picture | None]:  # fmt: skip
    """One question kind asked on the command line: (exit status, JSON, text lines, the --png picture)."""
    snapshot, lag = None, None
    if kind.name == LAG:  # the sources' marks, not a snapshot
        sync_given_sources(args, store, settings, err)
        lag = lambda: lag_report(specs, store, settings)  # noqa: E731
    else:
        snapshot = prepare_snapshot(args, specs, store, settings, err)
    ports = model_ports(settings) if kind.name == ASK else None
    # One clock: the graph's age is measured after the sync that made it, never before.
    wall = max(wall, clock())
    moment = args.now or wall
    live = live_port(args, specs, settings, lambda: moment) if kind.live else None
    answered = reply(args, snapshot, moment, wall, stale_policy(settings), ports, live, lag)
    status, data = answered.status, answered.data
    if kind.name == LINT and data.get("failed_sources"):
        # A source that gave nothing usable is "no usable input" for it (exit 2, as for no
        # input at all): 1 means a name did not resolve, and 0 would let CI pass a dead source.
        status = EXIT_USAGE
    lines = [] if args.json else answered.text()
    _report_model(data if kind.name == ASK else {}, err)
    drawing = answered.picture() if status == EXIT_OK and getattr(args, "png", None) else None
    return status, data, lines, drawing


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # The command line reports source failures itself; logs are for what it does not foresee.
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    out = render_text.SafeConsole(soft_wrap=True, highlight=False)
    err = render_text.SafeConsole(stderr=True, soft_wrap=True, highlight=False)
    try:
        settings = read_settings()
    except ValueError as exc:
        err.print(Text(f"oncall-graph: bad setting: {exc}", style="bold red"))
        return EXIT_USAGE
    wall = clock()
    specs = source_specs(args, settings)
    if args.command == "migrate":
        return _migrate_command(args, settings, out, err)
    drawing: Picture | None = None
    try:
        store = open_store(args.db or settings.database_url)
        if args.command == "serve":
            from bot.main import serve

            if args.metrics_port is not None:
                settings = settings.model_copy(update={"metrics_port": args.metrics_port})
            return serve(settings, specs, store)
        if args.command == "mcp":
            return run_mcp(args, specs, store, settings, err)
        if args.command == "sync":
            status, data = run_sync(args, specs, store, settings)
            lines = _sync_lines(data)
        elif args.command in ("extract", "review"):
            from bot.cli import review as cli_review

            try:
                if args.command == "extract":
                    status, data, lines = cli_review.run_extract(args, store, settings, err, sys.stdin)
                else:
                    status, data, lines = cli_review.run_review(args, store)
            except cli_review.UsageError as exc:
                raise UsageError(str(exc)) from exc
        else:
            kind = question_kind(args.command)  # the parser's commands are the kinds' (bot/cli/parser.py)
            status, data, lines, drawing = _ask(args, kind, specs, store, settings, wall, err)
    except (UsageError, StoreError) as exc:
        err.print(Text(f"oncall-graph: {exc}", style="bold red"))
        return EXIT_USAGE
    if args.json:
        sys.stdout.write(render_text.terminal_safe_json(data) + "\n")
    else:
        for line in lines:
            out.print(line)
    if drawing is not None:
        return write_png(args.png, drawing, err) or int(status)
    return int(status)

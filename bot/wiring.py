"""What every entry point wires the same way: the clock, the store, source access, the model, and
the process's policy for each snapshot it serves.

The entry points import this module instead of each other: `bot.main` (the server) and
`bot.cli.review` (extract, review) never import `bot.cli.main`, the command line, which dispatches
`serve`, `mcp`, `extract` and `review` to them.
"""

from __future__ import annotations

import hashlib
import os
import weakref
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from bot.model.ports import Explainer, QuestionReader
from bot.settings import Settings
from graph.background import Step
from graph.snapshot import Snapshot, SnapshotRef
from graph.warm import warm
from sync.collector import collector_paused
from sync.live import LiveConfig, LiveFeed
from sync.snapshot_images import SnapshotImages
from sync.sources.pagerduty import DEFAULT_BASE_URL, parse_location
from sync.sources.reading.limits import ReadLimits
from sync.sources.registry import SourceAccess, SourceSpec
from sync.sources.trace_options import METRIC_PREFIX, TraceOptions, window_seconds
from sync.store.database import make_engine, migrate, normalize_url
from sync.store.fact_store import Store


class StoreError(Exception):
    """The database cannot be opened; the message names it (never with its password)."""


def clock() -> datetime:
    return datetime.now(UTC)


def source_access(settings: Settings) -> SourceAccess:
    limits = ReadLimits(settings.max_file_bytes, settings.source_deadline)
    return SourceAccess(
        settings.http_timeout, settings.source_tokens(), limits, trace_options(settings), settings.backstage_url
    )


def trace_options(settings: Settings) -> TraceOptions:
    """How trace sources count calls; a window nobody can read is a settings error naming the variable."""
    try:
        window = window_seconds(settings.observed_window)
    except ValueError as exc:
        raise ValueError(f"ONCALL_GRAPH_OBSERVED_WINDOW: {exc}") from None
    prefix = settings.service_graph_prefix.strip() or METRIC_PREFIX
    return TraceOptions(window, settings.observed_min_calls, prefix, settings.service_graph_tenant.strip())


def live_feed(settings: Settings, specs: Sequence[SourceSpec], now: Callable[[], datetime] = clock) -> LiveFeed | None:
    """The answers' look at the present: the first service-graph source's calls over
    ONCALL_GRAPH_LIVE_WINDOW ending `now()` and, with PAGERDUTY_API_TOKEN, the open incidents;
    None when neither is configured. A window nobody can read is a settings error naming it."""
    try:
        window = window_seconds(settings.live_window)
    except ValueError as exc:
        raise ValueError(f"ONCALL_GRAPH_LIVE_WINDOW: {exc}") from None
    tokens = settings.source_tokens()
    config = LiveConfig(
        service_graph=next((s.location for s in specs if s.kind == "service-graph"), ""),
        service_graph_token=tokens.get("service-graph", ""),
        traces=trace_options(settings),
        window_seconds=window,
        deadline=settings.live_deadline,
        cache_seconds=settings.live_cache,
        max_bytes=settings.max_file_bytes,
        pagerduty_token=tokens.get("pagerduty", ""),
        pagerduty_url=settings.pagerduty_api_url.strip() or _pagerduty_base(specs),
    )
    return LiveFeed(config, now) if config.configured else None


def _pagerduty_base(specs: Sequence[SourceSpec]) -> str:
    """The --pagerduty source's API base URL (without its `?services=`), else PagerDuty's own."""
    for spec in specs:
        if spec.kind == "pagerduty":
            try:
                return parse_location(spec.location).base_url
            except ValueError:
                break  # the sync names what is wrong with it
    return DEFAULT_BASE_URL


def shown_url(url: str) -> str:
    """The database URL as logs may show it: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError as exc:
        raise StoreError(f"not a database URL (--db or DATABASE_URL): {exc}") from exc


def open_store(url: str) -> Store:
    """The fact store at `url`, its schema brought to the newest revision."""
    try:
        engine = make_engine(url)
        migrate(engine)
    except (ArgumentError, SQLAlchemyError, OSError) as exc:
        raise StoreError(f"cannot open the database {shown_url(url)!r}: {exc}") from exc
    return Store(engine)


def image_path(url: str, folder: str) -> Path | None:
    """Where the snapshot image of the database at `url` is kept (ONCALL_GRAPH_SNAPSHOT_DIR), or None.

    A SQLite file's image lies beside it unless a folder is set; PostgreSQL's goes to the folder, else
    to `$XDG_CACHE_HOME/oncall-graph` (`~/.cache/oncall-graph`), one file per database URL."""
    folder = folder.strip()
    if folder.lower() == "off":
        return None
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            return None  # nothing outlives an in-memory database
        database = Path(parsed.database)
        return (Path(folder) if folder else database.parent) / f"{database.name}.snapshot"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "oncall-graph"
    named = hashlib.sha256(shown_url(url).encode()).hexdigest()[:12]
    return (Path(folder) if folder else cache) / f"oncall-graph-{named}.snapshot"


def snapshot_images(
    settings: Settings, store: Store, make_way: Callable[[], Step] | None = None
) -> SnapshotImages | None:
    """The image keeper of the store, unless ONCALL_GRAPH_SNAPSHOT_DIR=off or its database is in memory;
    `make_way`: the step of each write (`graph.background`)."""
    url = store.engine.url.render_as_string(hide_password=True)
    try:
        path = image_path(url, settings.snapshot_dir)
    except ArgumentError:
        return None
    return None if path is None else SnapshotImages(store, path, clock, shown_url(url), make_way)


def model(settings: Settings) -> tuple[Explainer, QuestionReader] | None:
    """The explainer and question reader when ANTHROPIC_API_KEY is set; without it no client is built
    (and no network)."""
    if not settings.anthropic_api_key.strip():
        return None
    # Imported only when a key is set: the SDK's import alone took 2 of the 3.5 s a restart spent
    # before it began loading the graph.
    from bot.model.claude import build_model

    return build_model(settings)


def snapshot_ref() -> SnapshotRef:
    """The swap cell an entry point serves from. Each snapshot swapped in is prepared first: every
    index answers use is built (no one's first query after a sync pays for them), and a new graph
    is taken out of the collector."""
    last: list[weakref.ref[Snapshot]] = []  # the snapshot prepared last (a weak reference: never kept alive)

    def prepare_to_serve(snapshot: Snapshot) -> None:
        # The collector's full passes walked every object of the graph, millions at 100k entities:
        # 1-2 s with every thread stopped, at moments no one chose (often the first query after a
        # restart). Frozen, the graph is skipped by those passes. It is still freed when replaced:
        # a snapshot holds no reference cycles, so reference counting frees it, frozen or not.
        # Only a new graph is frozen, its indexes built with the collector paused: a deploy delta
        # or new marks share the frozen one's entities, and freezing at each of them (ten a second
        # under pushes) would also freeze whatever garbage cycles were alive that moment, out of
        # the collector's reach for good.
        previous = last[0]() if last else None
        new = previous is None or snapshot.entities is not previous.entities
        with collector_paused(freeze=True) if new else nullcontext():
            warm(snapshot)
        last[:] = [weakref.ref(snapshot)]

    return SnapshotRef(prepare=prepare_to_serve)

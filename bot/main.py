"""The server's composition root: settings, store, sync scheduler, Slack app and HTTP server,
wired once. `oncall-graph serve` runs it until SIGTERM/SIGINT, then stops cleanly and releases
the sync lock.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler

from bot.http import SERVER_BODY_CAP, WsgiApp, build_wsgi, counted_while_handled, metrics_wsgi
from bot.http_server import create_http_server
from bot.pagerduty.webhook import build_webhook
from bot.query.lag import answer_lag
from bot.render.png import PictureRenderer
from bot.settings import Settings, split_list
from bot.slack.answer_slots import AnswerSlots
from bot.slack.app import build_app, build_client
from bot.slack.attachments import Attachments
from bot.slack.blocks.review import EDGES_SHOWN
from bot.slack.claims import Claims
from bot.slack.deps import BotDeps
from bot.slack.lag_alerts import SlackLagNotifier
from bot.slack.requests import guarded
from bot.slack.retrying import Poster
from bot.telemetry.log_format import configure_logging
from bot.telemetry.metrics import Metrics
from bot.telemetry.sync_telemetry import SyncTelemetry
from bot.telemetry.tracing import start_tracing
from bot.webhooks.deploys import build_deploy_webhooks
from bot.webhooks.refusals import Unproven
from bot.wiring import clock, live_feed, model, snapshot_images, snapshot_ref, source_access
from graph.health.freshness import LagReport
from graph.health.hygiene import lint
from graph.review import APPROVED, ProposedEdge
from graph.snapshot import Snapshot, SnapshotRef
from graph.warm import load_walk_modules
from sync.lag import LagNotifier, LogNotifier
from sync.leader import leadership_for
from sync.push import PushIntake
from sync.schedule import SyncService, SyncSettings, start_scheduler
from sync.sources.registry import SourceSpec
from sync.store.deliveries import DeliveryClaims
from sync.store.fact_store import Store
from sync.store.reviews import ReviewStore
from sync.version_watch import VersionWatcher

log = logging.getLogger(__name__)
HTTP_THREADS = 64  # each Slack request holds one until its ack: a burst must not queue
SWITCH_INTERVAL = 0.001  # seconds a thread holds the GIL before a waiting one may take it (Python: 0.005)


class ConfigError(Exception):
    """A setting the server cannot start without; the message names the variable."""


def replica_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def sync_settings(settings: Settings) -> SyncSettings:
    return SyncSettings(
        interval=settings.sync_interval,
        poll_interval=settings.poll_interval,
        max_drop=settings.max_drop,
        access=source_access(settings),
        stale_after=settings.stale_after_map(),
        replica=replica_name(),
    )


def hygiene_counts(snapshot: Snapshot) -> dict[str, int]:
    report = lint(snapshot)
    return {
        "dangling refs": len(report.dangling),
        "kindless refs": len(report.kindless),
        "unknown owners": len(report.unknown_owners),
        "alias collisions": len(report.alias_collisions),
        "without owner": len(report.without_owner),
        "unresolved deploys": len(report.unresolved_deploys),
        **(
            {
                "undeclared calls": len(report.drift.undeclared),
                "unknown services": len(report.drift.unknown_services),
            }
            if report.drift is not None
            else {}
        ),
    }


def build_deps(
    settings: Settings,
    specs: Sequence[SourceSpec],
    store: Store,
    ref: SnapshotRef,
    *,
    catch_up: Callable[[], None],
    unproven: Unproven,
) -> BotDeps:
    """`catch_up` brings this replica's snapshot to the graph version now (the sync service's);
    `unproven` holds the deploy webhooks' refusals of unproven senders, which lag shows."""
    names = [s.name for s in specs]
    policy = settings.stale_policy()

    def lag() -> LagReport:
        # /graph-lag and /metrics: the lag answer, as `oncall-graph lag` gives it (the judged sources,
        # the configured ones never synced, each applied read's problems).
        marks = [state.mark() for state in store.source_states().values()]
        return answer_lag(marks, names, clock(), policy, store.live_problems(), unproven.seen()).report

    replica = replica_name()
    reviews = ReviewStore(store)
    deliveries = DeliveryClaims(store, replica=replica)
    claims = Claims(
        take=lambda key: deliveries.take(key, at=clock()),
        settle=lambda key, delivered: deliveries.settle(key, delivered=delivered, at=clock()),
    )

    def decide_review(edge_id: int, decision: str, user: str) -> ProposedEdge:
        [edge] = reviews.decide([edge_id], decision, actor=user, at=clock())
        if edge.status == APPROVED:
            catch_up()  # this replica at once, under the sync's lock; the others follow the version
        return edge

    renderer = PictureRenderer.find()
    if not renderer.available:
        log.warning("%s", renderer.missing_warning())  # once, at start: never once per answer
    metrics = Metrics()
    metrics.watch_sources(lag)
    slots = AnswerSlots()
    poster = Poster(metrics)  # every post to Slack, retried in one place
    ports = model(settings)  # None without ANTHROPIC_API_KEY: no client, no network
    live = live_feed(settings, specs)  # None without a service-graph source or a PagerDuty token
    if live is not None:
        atexit.register(live.settle)
    if ports is not None:
        log.info("answers are phrased by %s; questions read by %s", ports[0].model, ports[1].model)
    return BotDeps(
        snapshot=ref.current,
        claims=claims,
        lag=lag,
        clock=clock,
        metrics=metrics,
        admins=split_list(settings.admins),
        watch_channels=split_list(settings.watch_channels),
        alert_bots=split_list(settings.alert_bots),
        stale_policy=policy,
        hygiene=hygiene_counts,
        pending_reviews=lambda: (reviews.count(), reviews.edges(limit=EDGES_SHOWN)),
        decide_review=decide_review,
        work_slots=slots,
        attachments=Attachments(slots, renderer, poster=poster),
        poster=poster,
        explainer=ports[0] if ports else None,
        reader=ports[1] if ports else None,
        live=live,
        backstage_url=settings.backstage_url,
    )


def health(ref: SnapshotRef, store: Store) -> dict[str, Any]:
    snapshot = ref.current()
    if snapshot is None:
        return {"ready": False, "reason": "no graph loaded yet"}
    oldest = snapshot.age_mark()
    age = (clock() - oldest.last_success).total_seconds() if oldest and oldest.last_success else None
    return {"ready": True, "entities": len(snapshot.entities), "edges": snapshot.edge_count, "oldest_age_seconds": age}


def slack_frontend(settings: Settings, deps: BotDeps) -> tuple[WsgiApp | None, SocketModeHandler | None, Any]:
    """(HTTP handler, Socket Mode handler, client); none of them without SLACK_BOT_TOKEN."""
    if not settings.slack_bot_token:
        log.warning("SLACK_BOT_TOKEN is not set: syncing and serving /healthz and /metrics only, without Slack")
        return None, None, None
    if not settings.slack_app_token and not settings.slack_signing_secret:
        raise ConfigError("SLACK_SIGNING_SECRET is not set; HTTP mode needs it to verify Slack's requests")
    client = build_client(settings.slack_bot_token, settings.slack_api_url)
    app = build_app(deps, client=client, signing_secret=settings.slack_signing_secret or "unused-in-socket-mode")
    if settings.slack_app_token:
        return None, SocketModeHandler(app, settings.slack_app_token), client
    # Size, signature and shape are checked before Bolt parses anything (bot/slack/requests.py).
    return guarded(SlackRequestHandler(app), settings.slack_signing_secret), None, client


def serve(settings: Settings, specs: Sequence[SourceSpec], store: Store) -> int:
    try:
        configure_logging(settings.log_format)
    except ValueError as exc:
        log.error("%s", exc)
        return 2
    stop_tracing = start_tracing(settings.otel_endpoint, settings.otel_service_name) if settings.otel_endpoint else None
    # Threads waiting for the GIL get it after 1 ms instead of 5: a request's many short steps
    # (read, verify, ack, post) each waited out a background writer's turn (bench, 100k hub:
    # p50 64 -> 35 ms, slowest of 30 116 -> 56 ms).
    sys.setswitchinterval(SWITCH_INTERVAL)
    ref = snapshot_ref()
    # The service is made after the deps (its lag notifier posts through them); an approval, the
    # only caller, comes in a request, once the server runs.
    unproven = Unproven(clock)  # refusals anyone can cause: in memory, never in the database
    try:
        deps = build_deps(settings, specs, store, ref, catch_up=lambda: service.catch_up(), unproven=unproven)
        slack_http, socket_mode, client = slack_frontend(settings, deps)
        pagerduty = build_webhook(settings, deps, client)
    except (ConfigError, ValueError) as exc:
        log.error("%s", exc)
        return 2
    notifier: LagNotifier = LogNotifier()
    if client is not None and settings.alert_channel:
        notifier = SlackLagNotifier(client, settings.alert_channel, deps.poster)
    service = SyncService(
        specs, store, ref, clock, leadership_for(store.engine), notifier, sync_settings(settings),
        observer=SyncTelemetry(deps.metrics), images=snapshot_images(settings, store, deps.work_slots.make_way),
        make_way=deps.work_slots.make_way,
    )  # fmt: skip
    service.load()
    # The rest of the walks' scipy (its csgraph; `warm` took scipy.sparse) loaded while the server
    # starts, not in the first answer, whose walk waits for it if it is not done. Started beside
    # the image's load instead, it slowed the load by more than it saved and raised the peak RSS
    # (bench/restart_bench.py at 100k, A/B: see docs/architecture.md, Known gaps).
    threading.Thread(target=load_walk_modules, name="walk-modules", daemon=True).start()
    log.info("serving graph version %s", store.graph_version())
    scheduler = start_scheduler(service)
    # Another replica's push, sync or review reaches this one's answers at once, not at its next poll.
    watcher = VersionWatcher(store, service.wake, poll_interval=settings.wake_poll_interval)
    watcher.start()
    registry = deps.metrics.registry
    slack = counted_while_handled(slack_http, deps.work_slots.arriving) if slack_http is not None else None
    # Deploys pushed in: stored with their version step, then read back as a delta. The watcher hears
    # this replica's own steps too; a second follower of them would take every delta twice.
    refresh = None if watcher.watching else service.catch_up
    intake = PushIntake(store, clock, refresh=refresh, replica=replica_name())
    webhooks = build_deploy_webhooks(settings, intake, unproven, deps.metrics)
    own_metrics = settings.metrics_port is not None
    wsgi = build_wsgi(
        slack, health=lambda: health(ref, store), registry=registry, pagerduty=pagerduty, webhooks=webhooks,
        metrics_here=not own_metrics,
    )  # fmt: skip
    # waitress answers 413 itself for a body over the cap, chunked or not, reading the rest only to drop it.
    server = create_http_server(
        wsgi, host="0.0.0.0", port=settings.port, threads=HTTP_THREADS, body_cap=SERVER_BODY_CAP
    )
    port = getattr(server, "effective_port", settings.port)  # one listening socket: the port it really got
    metrics_server = None
    if settings.metrics_port is not None:
        metrics_server = create_http_server(
            metrics_wsgi(registry), host="0.0.0.0", port=settings.metrics_port, threads=2, body_cap=1024
        )
        threading.Thread(target=metrics_server.run, name="metrics-http", daemon=True).start()
        log.info("metrics on http://127.0.0.1:%s/metrics", getattr(metrics_server, "effective_port", "?"))
    log.info("listening on http://127.0.0.1:%s (/slack/events, /healthz%s)", port, "" if own_metrics else ", /metrics")
    if socket_mode is not None:
        socket_mode.connect()  # type: ignore[no-untyped-call]
        log.info("connected to Slack in Socket Mode")

    def _stop(signum: int, _frame: FrameType | None) -> None:
        log.info("received signal %s; shutting down", signum)
        raise SystemExit(0)  # waitress's run() catches it and drains its worker threads

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        server.run()
    finally:
        if metrics_server is not None:
            metrics_server.close()
        if socket_mode is not None:
            socket_mode.close()  # type: ignore[no-untyped-call]
        if pagerduty is not None:
            pagerduty.close()  # in-flight incident posts finish first
        watcher.stop()
        scheduler.shutdown(wait=True)
        intake.close()
        if deps.attachments is not None:
            deps.attachments.close()  # full texts and pictures already handed over still reach their threads
        service.stop()
        store.engine.dispose()
        if stop_tracing is not None:
            stop_tracing()  # flushes the spans still batched
        log.info("stopped")
    return 0

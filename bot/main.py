"""The server's composition root: settings, store, sync service and scheduler, wired once.

The Slack app joins this process in its own module; until then `serve` keeps the graph fresh
and stops cleanly on SIGTERM/SIGINT, releasing the sync lock.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from types import FrameType

from bot.settings import Settings
from graph.snapshot import SnapshotRef
from sync.lag import LogNotifier
from sync.leader import leadership_for
from sync.schedule import SyncService, SyncSettings, start_scheduler
from sync.sources import SourceSpec
from sync.store import Store

log = logging.getLogger(__name__)


def clock() -> datetime:
    return datetime.now(UTC)


def sync_settings(settings: Settings) -> SyncSettings:
    return SyncSettings(
        interval=settings.sync_interval,
        poll_interval=settings.poll_interval,
        max_drop=settings.max_drop,
        timeout=settings.http_timeout,
        stale_after=settings.stale_after_map(),
        replica=f"{socket.gethostname()}:{os.getpid()}",
    )


def build_sync_service(settings: Settings, specs: Sequence[SourceSpec], store: Store, ref: SnapshotRef) -> SyncService:
    leadership = leadership_for(store.engine)
    return SyncService(specs, store, ref, clock, leadership, LogNotifier(), sync_settings(settings))


def serve(settings: Settings, specs: Sequence[SourceSpec], store: Store) -> int:
    logging.getLogger().setLevel(logging.INFO)
    ref = SnapshotRef()
    service = build_sync_service(settings, specs, store, ref)
    loaded = service.load()
    log.info("serving graph version %s (%s)", store.graph_version(), "loaded" if loaded else "empty until first sync")
    scheduler = start_scheduler(service)
    stop = threading.Event()

    def _stop(signum: int, _frame: FrameType | None) -> None:
        log.info("received signal %s; shutting down", signum)
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    stop.wait()
    scheduler.shutdown(wait=True)
    service.stop()
    store.engine.dispose()
    log.info("stopped")
    return 0

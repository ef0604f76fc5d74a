"""Keeping a replica's graph fresh: the sync job (leader only), following the graph version
(everyone), lag alerts (once per transition, across replicas), and the APScheduler wiring.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, timedelta
from typing import TYPE_CHECKING

from apscheduler.schedulers.background import BackgroundScheduler

from graph.background import Step, paced
from graph.health.freshness import LagTransition, StalePolicy, judge
from graph.snapshot import Snapshot, SnapshotRef
from sync.deltas import REBUILD, Update
from sync.lag import LagNotifier
from sync.leader import Leadership
from sync.observer import NoObserver, SyncObserver
from sync.refresh import (
    DEFAULT_ACCESS,
    DEFAULT_MAX_DROP,
    Clock,
    SyncReport,
    apply_reads,
    bring_up,
    fresh_calls,
    read_sources,
)
from sync.sources.registry import SourceAccess, SourceSpec
from sync.store.fact_store import SourceState, Store, in_graph, source_marks

if TYPE_CHECKING:
    from sync.snapshot_images import SnapshotImages

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SyncSettings:
    interval: float = 300.0
    poll_interval: float = 10.0
    max_drop: float = DEFAULT_MAX_DROP
    access: SourceAccess = DEFAULT_ACCESS
    stale_after: Mapping[str, float] = field(default_factory=dict)  # per-source threshold override, seconds
    replica: str = ""

    @property
    def policy(self) -> StalePolicy:
        return StalePolicy(self.interval, dict(self.stale_after))


class SyncService:
    """One per process. `tick` syncs when this replica leads; `follow` picks up other replicas' syncs."""

    def __init__(
        self,
        specs: Sequence[SourceSpec],
        store: Store,
        ref: SnapshotRef,
        clock: Clock,
        leadership: Leadership,
        notifier: LagNotifier,
        settings: SyncSettings,
        observer: SyncObserver | None = None,
        images: SnapshotImages | None = None,
        make_way: Callable[[], Step] | None = None,
    ) -> None:
        self.specs, self.store, self.ref, self.clock = tuple(specs), store, ref, clock
        self.leadership, self.notifier, self.settings = leadership, notifier, settings
        self.observer: SyncObserver = observer or NoObserver()
        self.images = images  # the snapshot kept as a file: loaded at start, written after each build
        self._seen_version = -1
        self._lock = threading.Lock()  # a sync and a follow never rebuild at the same time
        # A step for each job after the start (a sync, a follow, a delta), letting answers go first.
        self.make_way = make_way

    def _job(self) -> AbstractContextManager[None]:
        return paced(self.make_way() if self.make_way is not None else None)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.specs]

    def load(self) -> Snapshot | None:
        """At start, before any sync: serve the last stored graph at once. Its size is reported
        by `report_size`, once the server answers (the retired-edge count is 0.3 s at 100k)."""
        with self._lock:
            self._seen_version = self.store.graph_version()
            if self.images is not None:
                update = self.images.load_update(self.names or None)
            else:
                update = bring_up(self.store, None, self._seen_version, self.names or None, self.clock)
            if update.snapshot is not None:
                self.ref.swap(update.snapshot)
                if update.how == REBUILD:
                    self._keep(update.snapshot, update.snapshot.version)
                self._updated(update)
            return update.snapshot

    def report_size(self) -> None:
        """The served graph's size gauges (once, as the scheduler starts, after `load`)."""
        try:
            if (snapshot := self.ref.current()) is not None:
                self._report_size(snapshot)
        except Exception:  # a gauge: the next build reports it again
            log.exception("reporting the graph's size failed")

    def tick(self) -> SyncReport | None:
        with self._job():
            return self._tick()

    def _tick(self) -> SyncReport | None:
        if not self.leadership.try_lead():
            self._follow()
            return None
        s = self.settings
        with self.observer.syncing():
            # The slow half, holding no lock: a push's refresh or a wake never waits for a slow feed.
            reads = read_sources(self.specs, self.store, self.clock, access=s.access)
            with self._lock:
                # The version may have moved without a sync (a push, an approved review): catch up
                # first, so the sources' changes join a current graph.
                if self.store.graph_version() != self._seen_version or self.ref.current() is None:
                    self._follow_locked()
                seen = self._seen_version
                report = apply_reads(
                    self.specs, reads, self.store, self.ref, self.clock, max_drop=s.max_drop, replica=s.replica
                )
                # Remember only what this tick saw: a move meanwhile is picked up by the next wake or follow.
                self._seen_version = report.version if report.changed else seen
                if report.snapshot is not None and report.update is not None and report.update.how == REBUILD:
                    self._report_size(report.snapshot)
                    # After a rebuild only, as when following: an image written after a delta or an
                    # unchanged tick would slow this replica's answers every sync interval while pushes
                    # arrive (the pickling contends for the GIL for 1.4-2.9 s at 100k; an answer
                    # during it took up to 0.8 s).
                    self._keep(report.snapshot, report.version)
                if report.update is not None:
                    self._updated(report.update)
            for o in report.outcomes:
                log.info(
                    "source %s %s in %.2f s", o.name, o.outcome, o.seconds,
                    extra={"source": o.name, "outcome": o.outcome, "duration": round(o.seconds, 4)},
                )  # fmt: skip
                self.observer.source_synced(o.name, o.outcome, o.seconds, o.error)
        log.info(
            "synced: graph version %s (%s)", report.version, ", ".join(f"{o.name} {o.outcome}" for o in report.outcomes)
        )
        self.check_lag()
        return report

    def _keep(self, snapshot: Snapshot, version: int) -> None:
        # `version` was read before the facts `snapshot` was built from.
        if self.images is not None:
            self.images.keep(snapshot, self.names or None, version)

    def _report_size(self, snapshot: Snapshot) -> None:
        # Retired facts are counted once per build, not per scrape or per delta (a count over every
        # fact row, 0.3 s at 100k, which a delta's deploys never change; nor do its entities or edges).
        self.observer.graph_built(len(snapshot.entities), snapshot.edge_count, self.store.retired_edge_count())

    def follow(self) -> None:
        """Rebuild when another replica moved the graph version; else just refresh freshness marks."""
        with self._job():
            self._follow(wait=False)
        # Every replica watches lag; the database lets exactly one of them announce each transition.
        self.check_lag()

    def _follow(self, *, wait: bool = True) -> None:
        # A sync storing its reads holds the lock while it rebuilds (seconds at 100k): the follow
        # job does not wait for it, so lag checks (and their alerts) go on meanwhile.
        if not self._lock.acquire(blocking=wait):
            return
        try:
            self._follow_locked()
        finally:
            self._lock.release()

    def _follow_locked(self, version: int | None = None) -> None:
        """`version`: the graph version just read, when the caller has it (one query, not two)."""
        version = self.store.graph_version() if version is None else version
        current = self.ref.current()
        if current is not None and current.version == version != self._seen_version:
            self._seen_version = version  # already built from this version (a sync or a catch-up did)
        if version != self._seen_version or current is None:
            update = bring_up(self.store, current, version, self.names or None, self.clock)
            if update.snapshot is not None:
                self.ref.swap(update.snapshot)
                if update.how == REBUILD:
                    self._report_size(update.snapshot)
                    self._keep(update.snapshot, version)  # a delta's image waits: a stale image takes deltas too
                self._updated(update)
            self._seen_version = version
            return
        states = self.store.source_states()
        wanted = in_graph(self.names, states)
        marks = source_marks(v for k, v in states.items() if k in wanted)
        self.ref.swap(current.with_marks(marks, calls=fresh_calls(self.store, current, marks, self.names)))

    def wake(self) -> None:
        """The graph version moved (announced, or seen by the short poll): follow it now. Waits
        for a rebuild under way, then does nothing when that rebuild already caught up."""
        with self._job(), self._lock:
            version = self.store.graph_version()
            if self.ref.current() is None or version != self._seen_version:
                self._follow_locked(version)

    def catch_up(self) -> None:
        """Bring the snapshot to the graph version now (a pushed deploy stored on this replica): the
        deploy rows of the steps since are read back from the store and joined as a delta. Not
        paced: it runs on a request's thread, which may itself count as an answer."""
        self._follow()

    def _updated(self, update: Update) -> None:
        """One log line and the metric per snapshot brought up (a delta, a rebuild, an image)."""
        version = update.snapshot.version if update.snapshot is not None else -1
        log.info(
            "graph version %s served by %s in %.3f s%s", version, update.how, update.seconds,
            f": {update.detail}" if update.detail else "",
            extra={"graph_version": version, "how": update.how, "duration": round(update.seconds, 4)},
        )  # fmt: skip
        self.observer.snapshot_updated(update.how, update.seconds)

    def check_lag(self) -> list[LagTransition]:
        """Alert once when a source turns stale, failing or held and once when it recovers, whichever
        replica sees it: the store remembers the last state announced, so a tick that finds it
        unchanged (a held change is held again on every tick) says nothing."""
        now = self.clock()
        states = self.store.source_states()
        # A source registered but never attempted is having its first read (a cold start): nothing
        # to announce yet; its first attempt ends, within its read deadline, in data or an error.
        attempted = [n for n in sorted(in_graph(self.names, states)) if n in states and _attempted(states[n])]
        report = judge([states[n].mark() for n in attempted], now, self.settings.policy)
        sent = []
        for lag in report.sources:
            if lag.ok == states[lag.name].stale and self.store.flip_stale(lag.name, not lag.ok, at=now):
                transition = LagTransition(lag.name, not lag.ok, now, lag)
                self.notifier.notify(transition)
                sent.append(transition)
        return sent

    def stop(self) -> None:
        self.leadership.release()


def _attempted(state: SourceState) -> bool:
    return state.last_attempt is not None or state.last_success is not None


def start_scheduler(service: SyncService) -> BackgroundScheduler:
    """Sync every interval (jittered, never overlapping, missed runs coalesced) and follow the version."""
    s = service.settings
    scheduler = BackgroundScheduler(timezone=UTC)
    # Once, now, off the start's path to the first answer. A thread, not a one-off job: APScheduler
    # removes a one-off job after running it, on its own thread, and raised there when a shutdown
    # came first (seen in CI: JobLookupError 'graph-size').
    threading.Thread(target=service.report_size, name="graph-size", daemon=True).start()
    first = service.clock() + timedelta(seconds=random.uniform(0, min(5.0, s.interval / 10)))
    scheduler.add_job(
        service.tick, "interval", seconds=s.interval, jitter=max(1, int(s.interval / 10)), id="graph-sync",
        max_instances=1, coalesce=True, misfire_grace_time=int(s.interval), next_run_time=first,
    )  # fmt: skip
    scheduler.add_job(
        service.follow, "interval", seconds=s.poll_interval, id="graph-follow", max_instances=1, coalesce=True,
        misfire_grace_time=int(s.poll_interval),
    )  # fmt: skip
    scheduler.start()
    return scheduler

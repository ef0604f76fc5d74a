"""The one stale verdict on a real sync: per-source limits, failing sources and held changes,
judged from what the store records, and the lag alert once per transition."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from graph.health.freshness import FAILING, HELD, OK, OVERDUE, LagTransition, StalePolicy, judge
from graph.snapshot import SnapshotRef
from sync.leader import EmbeddedLeadership
from sync.refresh import APPLIED, UNCHANGED, sync_once
from sync.refresh import HELD as HELD_OUTCOME
from sync.schedule import SyncService, SyncSettings
from sync.sources.registry import SourceSpec
from sync.store.fact_store import Store
from tests.sync.held_catalog import MAX_DROP, write_catalog
from tests.sync.test_refresh import T0, Clock


class RecordingNotifier:
    """The lag port implemented by a recorder: every transition it was told, in order."""

    def __init__(self) -> None:
        self.transitions: list[LagTransition] = []

    def notify(self, transition: LagTransition) -> None:
        self.transitions.append(transition)


def outcomes(store: Store, spec: SourceSpec, clock: Clock, ref: SnapshotRef) -> list[str]:
    return [o.outcome for o in sync_once([spec], store, ref, clock, max_drop=MAX_DROP).outcomes]


def test_a_held_change_keeps_ageing_from_the_last_applied_one_and_names_its_problems(
    store: Store, tmp_path: Path
) -> None:
    spec, clock, ref = SourceSpec("catalog", write_catalog(tmp_path / "catalog")), Clock(), SnapshotRef()
    assert outcomes(store, spec, clock, ref) == [APPLIED]
    write_catalog(tmp_path / "catalog", broken=True)
    clock.advance(minutes=10)
    assert outcomes(store, spec, clock, ref) == [HELD_OUTCOME]
    clock.advance(minutes=10)
    assert outcomes(store, spec, clock, ref) == [HELD_OUTCOME]  # held again, still not applied
    state = store.source_states()[spec.name]
    assert state.last_success == T0 and state.held_reason == "would drop 3 of 13 facts (limit 20%)"
    [lag] = judge([state.mark()], clock(), StalePolicy(interval=3600)).sources
    assert (lag.state, lag.ok, lag.stale, lag.age_seconds) == (HELD, False, False, 1200.0)  # held, not overdue
    [problem] = lag.problems
    assert "services.yaml#2" in problem and "is not read: skipped" in problem
    # Answers judge the snapshot's own marks: the held change reaches them too.
    snapshot = ref.current()
    assert snapshot is not None and "component:default/payments" in snapshot.entities  # the old facts answer
    verdict = judge(snapshot.marks.values(), clock(), StalePolicy(interval=3600))
    assert [(s.name, s.state, s.problems) for s in verdict.unhealthy] == [(spec.name, HELD, lag.problems)]


def test_a_source_read_as_its_applied_version_again_is_no_longer_held(store: Store, tmp_path: Path) -> None:
    spec, clock, ref = SourceSpec("catalog", write_catalog(tmp_path / "catalog")), Clock(), SnapshotRef()
    outcomes(store, spec, clock, ref)
    write_catalog(tmp_path / "catalog", broken=True)
    clock.advance(minutes=5)
    assert outcomes(store, spec, clock, ref) == [HELD_OUTCOME]
    write_catalog(tmp_path / "catalog")
    clock.advance(minutes=5)
    assert outcomes(store, spec, clock, ref) == [UNCHANGED]
    state = store.source_states()[spec.name]
    assert (state.held_reason, state.held_problems, state.last_success) == ("", (), clock())
    assert store.accept_held(spec.name, at=clock(), actor="admin") is None  # nothing left to accept


def test_failing_and_past_limit_sources_are_stale_in_the_one_verdict(store: Store, tmp_path: Path) -> None:
    catalog = SourceSpec("catalog", write_catalog(tmp_path / "catalog"))
    missing = SourceSpec("triples", str(tmp_path / "missing.json"))
    clock = Clock()
    sync_once([catalog, missing], store, SnapshotRef(), clock)
    clock.advance(minutes=3)
    marks = [s.mark() for s in store.source_states().values()]
    policy = StalePolicy(interval=300, overrides={catalog.name: 120})  # ONCALL_GRAPH_STALE_AFTER=NAME=120
    report = judge(marks, clock(), policy)
    states = {s.name: (s.state, s.ok, s.threshold_seconds) for s in report.sources}
    assert states == {catalog.name: (OVERDUE, False, 120.0), missing.name: (FAILING, False, 900.0)}
    assert report.stale and [s.name for s in report.unhealthy] == [catalog.name, missing.name]
    relaxed = judge(marks, clock(), StalePolicy(interval=300, overrides={catalog.name: 600}))
    assert [s.state for s in relaxed.sources] == [OK, FAILING]


def test_the_lag_alert_fires_once_when_a_source_is_held_and_once_when_it_recovers(store: Store, tmp_path: Path) -> None:
    spec, clock, notifier = SourceSpec("catalog", write_catalog(tmp_path / "catalog")), Clock(), RecordingNotifier()
    settings = SyncSettings(interval=60, max_drop=MAX_DROP)
    service = SyncService([spec], store, SnapshotRef(), clock, EmbeddedLeadership(), notifier, settings)
    service.tick()
    write_catalog(tmp_path / "catalog", broken=True)
    for _ in range(3):  # the change is held again on every tick: one alert, not three
        clock.advance(seconds=60)
        service.tick()
    [held] = notifier.transitions
    assert (held.stale, held.lag.state, held.at) == (True, HELD, T0 + timedelta(seconds=60))
    assert "services.yaml#2" in held.lag.problems[0]
    write_catalog(tmp_path / "catalog")
    clock.advance(seconds=60)
    service.tick()
    service.tick()
    assert [(t.stale, t.lag.state) for t in notifier.transitions] == [(True, HELD), (False, OK)]


def test_a_source_past_its_own_limit_alerts_once_though_nothing_syncs(store: Store, tmp_path: Path) -> None:
    spec, clock, notifier = SourceSpec("catalog", write_catalog(tmp_path / "catalog")), Clock(), RecordingNotifier()
    settings = SyncSettings(interval=3600, stale_after={spec.name: 90})
    service = SyncService([spec], store, SnapshotRef(), clock, EmbeddedLeadership(), notifier, settings)
    service.tick()
    clock.advance(seconds=60)
    assert service.check_lag() == []
    clock.advance(seconds=60)
    [overdue] = service.check_lag()
    assert (overdue.stale, overdue.lag.state, overdue.lag.age_seconds) == (True, OVERDUE, 120.0)
    assert service.check_lag() == [] and service.check_lag() == []
    service.tick()  # unchanged, confirmed fresh: recovered
    assert [(t.stale, t.lag.state) for t in notifier.transitions] == [(True, OVERDUE), (False, OK)]


def test_a_source_whose_first_read_is_under_way_is_not_announced(store: Store, tmp_path: Path) -> None:
    """A cold start registers every source before reading it: the lag check running meanwhile (it
    does not wait for the sync) must not post "never synced" and then "recovered" for each."""
    spec, clock, notifier = SourceSpec("catalog", write_catalog(tmp_path / "catalog")), Clock(), RecordingNotifier()
    settings = SyncSettings(interval=60)
    service = SyncService([spec], store, SnapshotRef(), clock, EmbeddedLeadership(), notifier, settings)
    store.ensure_source(spec.name, spec.kind, spec.location)  # what a sync does before its reads
    assert service.check_lag() == []
    service.tick()
    assert notifier.transitions == []


def test_a_first_read_that_fails_is_announced_once(store: Store, tmp_path: Path) -> None:
    spec, clock, notifier = SourceSpec("catalog", str(tmp_path / "nowhere")), Clock(), RecordingNotifier()
    settings = SyncSettings(interval=60)
    service = SyncService([spec], store, SnapshotRef(), clock, EmbeddedLeadership(), notifier, settings)
    service.tick()
    service.check_lag()
    [failing] = notifier.transitions
    assert (failing.stale, failing.lag.state, failing.lag.age_seconds) == (True, FAILING, None)

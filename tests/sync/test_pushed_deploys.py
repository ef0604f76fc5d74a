"""Pushed deploys: GitHub `deployment` events read by the feed's parser, stored once, judged by their own limit."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from graph.facts import SourceMark
from graph.health.freshness import StalePolicy, judge
from sync.push import PushIntake
from sync.refresh import load_snapshot
from sync.sources.deploys import parse_deploys
from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def github_deployment(deployment_id: int) -> dict[str, object]:
    return {
        "action": "created",
        "deployment": {"id": deployment_id, "ref": "v1.2.0", "environment": "production",
                       "created_at": "2026-12-01T11:58:00Z", "creator": {"login": "alice"}, "payload": {}},
        "repository": {"name": "antifraud", "full_name": "acme/antifraud"},
    }  # fmt: skip


def test_a_github_deployment_event_is_a_deploy_with_its_repository_full_name() -> None:
    facts = parse_deploys("webhook:github", "delivery d1", json.dumps(github_deployment(12)))
    [deploy] = facts.deploys
    assert (deploy.id, deploy.service, deploy.version, deploy.actor) == ("gh-12", "antifraud", "v1.2.0", "alice")
    assert deploy.repository == "acme/antifraud"
    assert deploy.deployed_at == datetime(2026, 12, 1, 11, 58, tzinfo=UTC)
    assert deploy.citation.locator == "delivery d1:1" and facts.problems == ()


def test_a_native_event_may_name_its_repository() -> None:
    line = json.dumps({"id": "r1", "service": "antifraud", "deployed_at": "2026-12-01T10:00:00Z",
                       "repository": "acme/antifraud"})  # fmt: skip
    [deploy] = parse_deploys("feed", "deploys.jsonl", line).deploys
    assert deploy.repository == "acme/antifraud"


def intake(tmp_path: Path, refreshed: list[int]) -> tuple[PushIntake, Store]:
    engine = make_engine(f"sqlite:///{tmp_path / 'graph.db'}")
    migrate(engine)
    store = Store(engine)
    push = PushIntake(store, lambda: AT, refresh=lambda: refreshed.append(1))
    push.open("deploys")
    return push, store


def test_a_delivery_is_stored_once_and_a_bad_one_stores_nothing(tmp_path: Path) -> None:
    refreshed: list[int] = []
    push, store = intake(tmp_path, refreshed)
    try:
        good = {"id": "ci-1", "service": "antifraud", "deployed_at": "2026-12-01T11:00:00Z"}
        bad = push.accept("deploys", json.dumps([good, {"id": "ci-2", "deployed_at": "2026-12-01T11:00:00Z"}]))
        assert bad.stored == () and "field service" in bad.errors[0]
        first = push.accept("deploys", json.dumps(good))
        again = push.accept("deploys", json.dumps(good))
        assert (first.stored, again.stored, again.repeated) == (("ci-1",), (), ("ci-1",))
        [stored] = store.load_facts()
        assert (stored.source, [d.id for d in stored.deploys]) == ("webhook:deploys", ["ci-1"])
        snapshot = load_snapshot(store, lambda: AT, ["catalog:elsewhere"])  # pushed facts join any graph
        assert snapshot is not None and "webhook:deploys" in snapshot.marks
        state = store.source_states()["webhook:deploys"]
        assert state.last_success == AT and "field service" in state.last_refused
    finally:
        push.close()


def test_a_pushed_source_is_stale_only_past_its_own_limit() -> None:
    store_marks = [
        _mark("webhook:github", AT - timedelta(days=30)),
        _mark("webhook:deploys", None),
        _mark("webhook:limited", AT - timedelta(hours=2)),
    ]
    report = judge(store_marks, AT, StalePolicy(300.0, {"webhook:limited": 3600.0}))
    by_name = {lag.name: lag for lag in report.sources}
    assert not by_name["webhook:github"].stale and by_name["webhook:github"].threshold_seconds is None
    assert not by_name["webhook:deploys"].stale  # never an event, no limit: quiet, not stale
    assert by_name["webhook:limited"].stale and by_name["webhook:limited"].threshold_seconds == 3600.0


def _mark(name: str, last: datetime | None) -> SourceMark:
    return SourceMark(name, last, pushed=True)

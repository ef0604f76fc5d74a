"""The lag answer every front renders: which sources it judges, and which never synced."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.query.lag import answer_lag
from bot.render.json import lag_json
from graph.facts import SourceMark
from graph.health.freshness import StalePolicy

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
POLICY = StalePolicy(300.0, {"deploys:feed": 60.0})


def _mark(name: str, minutes_ago: float, *, pushed: bool = False, error: str = "") -> SourceMark:
    return SourceMark(name, NOW - timedelta(minutes=minutes_ago), error, None, "v1", pushed=pushed)


MARKS = [
    _mark("deploys:feed", 2),
    _mark("catalog:repo", 1),
    _mark("catalog:old-repo", 1),
    _mark("pagerduty:webhook", 30, pushed=True),
]


def test_configured_sources_and_pushed_ones_are_judged_and_the_unsynced_named() -> None:
    answer = answer_lag(MARKS, ["catalog:repo", "deploys:feed", "docs:runbooks"], NOW, POLICY)
    assert [s.name for s in answer.report.sources] == ["catalog:repo", "deploys:feed", "pagerduty:webhook"]
    assert answer.never_synced == ("docs:runbooks",)
    assert [s.name for s in answer.report.unhealthy] == ["deploys:feed"]  # 2 min against its own 60 s limit
    assert answer.stale


def test_with_nothing_configured_every_stored_source_is_judged() -> None:
    answer = answer_lag(MARKS, [], NOW, POLICY)
    assert [s.name for s in answer.report.sources] == sorted(m.name for m in MARKS)
    assert answer.never_synced == ()


def test_the_json_lists_the_never_synced_after_the_judged_and_calls_the_graph_stale() -> None:
    answer = answer_lag(MARKS[1:2], ["catalog:repo", "docs:runbooks"], NOW, POLICY)
    data = lag_json(answer.report)
    assert [s["name"] for s in data["sources"]] == ["catalog:repo", "docs:runbooks"]
    assert data["sources"][0]["last_success"] == (NOW - timedelta(minutes=1)).isoformat()
    assert data["sources"][1] == {
        "name": "docs:runbooks", "last_success": None, "last_error": "never synced", "age_seconds": None,
        "stale": True, "state": "stale", "threshold_seconds": None, "held": "", "problems": [],
        "never_synced": True, "read_problems": {"total": 0, "errors": 0, "skipped": 0, "more": 0, "shown": []},
    }  # fmt: skip
    assert data["stale"] is True

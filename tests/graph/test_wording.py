from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graph.questions.rollups import ranking
from graph.questions.wording import (
    CHANGES,
    DEFAULT_WINDOW,
    DEPENDENCIES,
    IMPACT,
    OWNERSHIP,
    PATH,
    RISK,
    bounded_window,
    read_kinds,
    read_window,
)
from tests.graph.builders import dep, entity, snapshot
from tests.graph.shop import c

NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "window"),
    [
        ("what changed in the last six hours", timedelta(hours=6)),
        ("deploys in the past 30 min", timedelta(minutes=30)),
        ("anything in the last half hour", timedelta(minutes=30)),
        ("what went out today", timedelta(hours=15)),
        ("since yesterday?", timedelta(hours=39)),
        ("what changed this morning", timedelta(hours=9)),
        ("in the last 2h", timedelta(hours=2)),
        ("last hour", timedelta(hours=1)),
        ("past 3 days", timedelta(days=3)),
        ("what changed recently", DEFAULT_WINDOW),
    ],
)
def test_time_in_words_sets_the_window(question: str, window: timedelta) -> None:
    assert read_window(question, NOW) == window


@pytest.mark.parametrize(
    ("question", "mentions", "kinds"),
    [
        ("what does payments call, which of those changed in the last six hours, and who owns each?", 1,
         (DEPENDENCIES, CHANGES, OWNERSHIP)),
        ("consul is flapping, what does that take out?", 1, (IMPACT,)),
        ("ts-auth-mongo is unreachable, what's the fallout", 1, (IMPACT,)),
        ("whose is alloydb?", 1, (OWNERSHIP,)),
        ("who do i ping about refunds", 1, (OWNERSHIP,)),
        ("who is on call for notify", 1, (OWNERSHIP,)),
        ("what depends on postgres", 1, (IMPACT,)),
        ("what does postgres depend on", 1, (DEPENDENCIES,)),
        ("what got deployed in the last 2 hours?", 0, (CHANGES,)),
        ("what are our single points of failure?", 0, (IMPACT, RISK)),
        ("which systems are most at risk if mongodb fails?", 1, (IMPACT,)),
        ("does payments call redis?", 2, (PATH,)),
        ("payments", 1, (DEPENDENCIES,)),
    ],
)  # fmt: skip
def test_a_question_is_read_into_every_ask_it_makes(question: str, mentions: int, kinds: tuple[str, ...]) -> None:
    assert read_kinds(question, mentions) == kinds


def test_the_ranking_is_computed_once_per_graph_and_orders_by_what_breaks() -> None:
    snap = snapshot(
        [entity(c(n)) for n in ("db", "api", "web", "cron", "cache")],
        [dep(c("api"), c("db")), dep(c("web"), c("api")), dep(c("cron"), c("db")), dep(c("web"), c("cache"))],
    )
    first = ranking(snap)
    assert ranking(snap) is first
    assert [(e.entity, e.breaks) for e in first.exposures] == [(c("db"), 3), (c("api"), 1), (c("cache"), 1)]


@pytest.mark.parametrize(
    ("question", "window", "note"),
    [
        ("what got deployed in the past 0 hours?", timedelta(minutes=1),
         "'past 0 hours' is outside the windows answers take, from 1 minute to 1 year (1m … 365d): answered for"
         " the last minute instead."),
        ("any deploys in the last 30 seconds?", timedelta(minutes=1), "'in the last 30 seconds' is outside"),
        ("what changed over the last 99999999999 weeks", timedelta(days=365),
         "answered for the last year (365 days) instead."),
        ("deploys in the last 2 years?", timedelta(days=365), "'in the last 2 years' is outside"),
    ],
)  # fmt: skip
def test_a_window_outside_the_range_is_moved_and_said(question: str, window: timedelta, note: str) -> None:
    read = read_window(question, NOW)
    assert read == window
    assert bounded_window(question, read)[0] == window and note in bounded_window(question, read)[1]


def test_a_window_in_range_is_kept_and_a_readers_window_outside_it_is_said() -> None:
    assert bounded_window("what changed in the last 2h", timedelta(hours=2)) == (timedelta(hours=2), "")
    moved, said = bounded_window("what changed lately", timedelta(seconds=5))  # a model reader's 5 seconds
    assert moved == timedelta(minutes=1) and said.startswith("A window of 5 seconds is outside the windows")

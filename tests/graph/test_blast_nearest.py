from __future__ import annotations

from graph.exposure.visibility import Viewer
from graph.walks.blast import blast_radius
from tests.graph.builders import chain, dep, entity, snapshot

RESTRICTED = {"oncall-graph/visibility": "restricted", "oncall-graph/allowed-channels": "C-SEC"}


def c(name: str) -> str:
    return f"component:default/{name}"


def test_nearest_is_the_start_of_impacted_nearest_first() -> None:
    result = blast_radius(chain("login", "auth", "cache", "redis"), c("redis"))
    first_two = result.nearest(2)
    assert [(i.entity, i.hops) for i in first_two] == [(c("cache"), 1), (c("auth"), 2)]
    assert first_two == result.impacted[:2]
    assert first_two[1].path == (c("redis"), c("cache"), c("auth"))
    assert result.nearest(10) == result.impacted
    assert result.nearest(0) == ()


def test_nearest_puts_breaking_entities_before_degraded_ones_at_the_same_distance() -> None:
    snap = snapshot(
        [entity(c("a"), annotations={"oncall-graph/soft-dependencies": c("db")}), entity(c("b")), entity(c("db"))],
        [dep(c("a"), c("db")), dep(c("b"), c("db"))],
    )
    result = blast_radius(snap, c("db"))
    assert [(i.entity, i.impact) for i in result.nearest(2)] == [(c("b"), "breaks"), (c("a"), "degrades")]
    assert result.nearest(1) == result.impacted[:1]


def test_nearest_fills_its_limit_past_entities_the_viewer_may_not_see() -> None:
    snap = snapshot(
        [entity(c("db")), entity(c("secret"), annotations=RESTRICTED), entity(c("web")), entity(c("api"))],
        [dep(c("secret"), c("db")), dep(c("web"), c("db")), dep(c("api"), c("web"))],
    )
    outsider = blast_radius(snap, c("db"), viewer=Viewer(channel="C-OPS"))
    assert [i.entity for i in outsider.nearest(2)] == [c("web"), c("api")]
    assert outsider.nearest(2) == outsider.impacted[:2]
    insider = blast_radius(snap, c("db"), viewer=Viewer(channel="C-SEC"))
    assert [i.entity for i in insider.nearest(2)] == [c("secret"), c("web")]

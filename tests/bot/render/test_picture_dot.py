"""The pictures' DOT source, read back by Graphviz itself (`dot -Tjson`): what it draws is the answer."""

from __future__ import annotations

import functools
import json
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.query.ask import answer_ask
from bot.render.dot import (
    AMBER,
    MORE_IMPACTED,
    NOTE,
    ORANGE,
    RED,
    Picture,
    alert_dot,
    blast_dot,
    suspects_dot,
    view_dot,
)
from bot.render.png import PictureRenderer
from graph.exposure.visibility import EVERYONE, Viewer
from graph.health.freshness import StalePolicy
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects
from tests.bot.render.png import png_size
from tests.graph.builders import BUILT_AT, dep, deploy, entity, snapshot

REDIS = "resource:default/redis"
TEAM = "group:default/core-team"
NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


def c(name: str) -> str:
    return f"component:default/{name}"


@dataclass(frozen=True)
class Drawn:
    """A node or edge as Graphviz laid it out: its attributes and the text lines it rendered."""

    attrs: dict[str, str]
    text: list[str]


def dot_json(source: str) -> dict[str, Any]:
    done = subprocess.run(["dot", "-Tjson"], input=source, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@functools.cache
def drawn_text_is_escaped() -> bool:
    """Whether this `dot` writes a drawn line's backslashes escaped (`\\\\`) in its xdot ops, which `-Tjson`
    carries. Graphviz 2.43 (Debian's) writes the text as drawn; later Graphviz, and graphviz-pure (its
    16.1 port), escape it. Asked of `dot` itself, so the same tests read either one right."""
    graph = dot_json('digraph { a [label="x\\\\y"] }')
    [text] = [op["text"] for op in graph["objects"][0]["_ldraw_"] if op.get("op") == "T"]
    assert text in ("x\\y", "x\\\\y"), f"dot drew {text!r} for the label x\\y"
    return bool(text == "x\\\\y")


def layout(source: str) -> tuple[dict[str, Drawn], dict[tuple[str, str], Drawn]]:
    """(nodes by name, edges by (tail, head)) from `dot -Tjson`. Graphviz keeps a quoted id's `\\\\`
    as two characters in the name (only labels read escapes), so that one pair is folded back."""
    graph = dot_json(source)
    unescape = drawn_text_is_escaped()

    def drawn(obj: dict[str, object], draw: str) -> Drawn:
        ops = obj.get(draw) or []
        assert isinstance(ops, list)
        texts = [str(op["text"]) for op in ops if op.get("op") == "T"]
        if unescape:
            texts = [text.replace("\\\\", "\\") for text in texts]
        return Drawn({k: v for k, v in obj.items() if isinstance(v, str)}, texts)

    objects = graph.get("objects", [])
    names = [str(o["name"]).replace("\\\\", "\\") for o in objects]
    nodes = {name: drawn(o, "_ldraw_") for name, o in zip(names, objects, strict=True)}
    edges = {(names[e["tail"]], names[e["head"]]): drawn(e, "_ldraw_") for e in graph.get("edges", [])}
    return nodes, edges


def fan_out(width: int):  # type: ignore[no-untyped-def]
    """`width` services on redis, one more behind the first, all owned by core-team."""
    services = [c(f"svc-{i:02d}") for i in range(width)]
    return snapshot(
        [entity(REDIS), entity(TEAM), entity(c("web")), *(entity(s) for s in services)],
        [*(dep(s, REDIS) for s in services), dep(c("web"), services[0]),
         *(dep(s, TEAM, rel="owned_by") for s in [*services, REDIS])],
    )  # fmt: skip


def test_blast_picture_draws_the_failed_entity_the_nearest_impacted_and_one_summary_node() -> None:
    result = blast_radius(fan_out(12), REDIS)
    nodes, edges = layout(blast_dot(result, max_nodes=5).source)

    nearest = {i.entity for i in result.impacted[:5]}
    assert nearest == {c(f"svc-{i:02d}") for i in range(5)}  # one hop away, before web at two
    assert set(nodes) == nearest | {REDIS, MORE_IMPACTED, NOTE}
    assert nodes[MORE_IMPACTED].text == ["and 8 more impacted"]
    assert nodes[NOTE].text == ["survives: 0 components and resources"]
    assert nodes[REDIS].attrs["fillcolor"] == RED
    assert nodes[c("svc-03")].text == ["svc-03", "core-team"]  # owners on the second line
    assert set(edges) == {(s, REDIS) for s in nearest}
    assert all(e.text == ["depends_on"] for e in edges.values())


def test_breaks_are_solid_red_and_degrades_dashed_orange() -> None:
    soft = {"oncall-graph/soft-dependencies": "component:recs"}
    snap = snapshot(
        [entity(REDIS), entity(c("recs")), entity(c("web"), annotations=soft), entity(c("batch"))],
        [dep(c("recs"), REDIS), dep(c("web"), c("recs"))],
    )
    nodes, edges = layout(blast_dot(blast_radius(snap, REDIS)).source)

    assert "solid" in nodes[c("recs")].attrs["style"] and nodes[c("recs")].attrs["color"] == RED
    assert "dashed" in nodes[c("web")].attrs["style"] and nodes[c("web")].attrs["color"] == ORANGE
    assert edges[(c("web"), c("recs"))].attrs["style"] == "dashed"
    assert edges[(c("web"), c("recs"))].text == ["depends_on (soft)"]
    assert nodes[c("web")].text == ["web", "no known owner"]
    assert nodes[NOTE].text == ["survives: 1 components and resources"]  # batch: counted, not drawn
    assert c("batch") not in nodes


def test_suspects_picture_highlights_dependencies_deployed_in_the_window_with_their_deploys() -> None:
    snap = snapshot(
        [entity(c("payments")), entity(c("antifraud")), entity(c("ledger")), entity(REDIS)],
        [dep(c("payments"), c("antifraud")), dep(c("payments"), c("ledger")), dep(c("ledger"), REDIS)],
        [deploy("r-8812", "antifraud", "2026-11-29T14:05:00Z"), deploy("r-7000", "ledger", "2026-11-26T10:00:00Z")],
    )
    found = suspects(snap, c("payments"), now=NOW, window=timedelta(hours=6))
    nodes, edges = layout(suspects_dot(found, snap).source)

    assert set(nodes) == {c("payments"), c("antifraud"), c("ledger"), REDIS}
    assert nodes[c("antifraud")].attrs["fillcolor"] == AMBER
    assert nodes[c("antifraud")].text == ["antifraud", "no known owner", "r-8812 v1 2026-11-29 14:05 UTC"]
    assert "fillcolor" not in nodes[c("ledger")].attrs and not any("r-7000" in t for t in nodes[c("ledger")].text)
    assert set(edges) == {(c("payments"), c("antifraud")), (c("payments"), c("ledger")), (c("ledger"), REDIS)}


NASTY = [
    'say "hi"',
    "back\\slash\\",
    "<b>bold</b> & <i>",
    "ünïcødé-服务-🚀",
    "end\\n\\N\\l",
    "tab\there\nnewline",
]


def test_names_with_quotes_backslashes_unicode_and_angle_brackets_are_drawn_as_written() -> None:
    refs = [c(name) for name in NASTY]
    snap = snapshot([entity(REDIS), *(entity(r) for r in refs)], [dep(r, REDIS) for r in refs])
    picture = blast_dot(blast_radius(snap, REDIS))
    nodes, _ = layout(picture.source)

    shown = {ref.replace("\t", " ").replace("\n", " ") for ref in refs}  # control characters become spaces
    assert set(nodes) == shown | {REDIS, NOTE}
    for ref in shown:
        assert nodes[ref].text[0] == ref.removeprefix("component:default/")
    width, height = png_size(PictureRenderer.find().render_png(picture.source) or b"")
    assert width > 0 and height > 0


def test_an_outsider_picture_never_names_a_restricted_entity_and_counts_it() -> None:
    secret = {"oncall-graph/visibility": "restricted", "oncall-graph/allowed-channels": "C-SEC"}
    snap = snapshot(
        [entity(REDIS), entity(c("vault-proxy"), annotations=secret), entity(c("web")), entity(c("billing"))],
        [dep(c("web"), c("vault-proxy")), dep(c("vault-proxy"), REDIS), dep(c("billing"), REDIS)],
    )
    outsider = Viewer(channel="C-OPS", user="U-SRE")
    source = blast_dot(blast_radius(snap, REDIS, viewer=outsider)).source
    nodes, edges = layout(source)

    assert "vault" not in source
    assert set(nodes) == {REDIS, c("web"), c("billing"), NOTE}
    assert edges[(c("web"), REDIS)].text == ["via 1 hidden"]  # its chain, without the hidden hop
    assert "1 impacted entity not visible here" in nodes[NOTE].text
    insider = blast_dot(blast_radius(snap, REDIS, viewer=Viewer(channel="C-SEC"))).source
    assert c("vault-proxy") in layout(insider)[0]


def test_the_same_answer_always_draws_the_same_source() -> None:
    snap = fan_out(30)
    first = blast_dot(blast_radius(snap, REDIS), max_nodes=10)
    again = blast_dot(blast_radius(fan_out(30), REDIS), max_nodes=10)
    assert first == again
    assert first.filename == "blast-radius-redis.png" and first.title == "Blast radius of redis"


def test_alert_picture_puts_what_breaks_and_what_it_depends_on_around_the_alerting_entity() -> None:
    snap = snapshot(
        [entity(c("checkout")), entity(c("payments")), entity(c("ledger")), entity(REDIS)],
        [dep(c("checkout"), c("payments")), dep(c("payments"), c("ledger")), dep(c("ledger"), REDIS)],
        [deploy("r-1", "ledger", "2026-11-29T13:00:00Z")],
    )
    found = suspects(snap, c("payments"), now=NOW)
    nodes, edges = layout(alert_dot(found, blast_radius(snap, c("payments")), snap).source)

    assert set(nodes) == {c("checkout"), c("payments"), c("ledger"), REDIS, NOTE}
    assert nodes[c("checkout")].attrs["color"] == RED and nodes[c("ledger")].attrs["fillcolor"] == AMBER
    assert set(edges) == {(c("checkout"), c("payments")), (c("payments"), c("ledger")), (c("ledger"), REDIS)}


def test_a_mention_gets_a_picture_for_what_breaks_or_depends_but_not_for_who_owns() -> None:
    snap = fan_out(3)

    def drawn(question: str) -> Picture | None:
        bundle = answer_ask(snap, question, EVERYONE, BUILT_AT, StalePolicy())
        return view_dot(bundle.view(), snap)

    picture = drawn("what breaks if redis goes down?")
    assert picture is not None and REDIS in layout(picture.source)[0]
    depends = drawn("what does web depend on?")
    assert depends is not None and set(layout(depends.source)[0]) == {c("web"), c("svc-00"), REDIS}
    assert drawn("who owns svc-01?") is None

"""Source text in pictures and the terminal: any name renders, nothing reaches Graphviz or a terminal as markup."""

from __future__ import annotations

from rich.console import Console

from bot.render.dot import blast_dot
from bot.render.png import PictureRenderer
from bot.render.text import render_answer, render_blast
from graph.questions.ask import ask
from graph.walks.blast import blast_radius
from tests.graph.builders import dep, entity, snapshot

HOSTILE = 'a"b\\c\nd<e>&f\\N\\l]\x1b[31m\x07\u202e' * 10


def hostile_graph():  # type: ignore[no-untyped-def]
    long_ref = "component:default/" + "x" * 20_000
    twin = "component:default/" + "x" * 19_999 + "y"
    weird = "component:default/" + HOSTILE
    refs = [long_ref, twin, weird]
    snap = snapshot([entity("resource:default/db"), *(entity(r, owner=r) for r in refs)],
                    [dep(r, "resource:default/db", at=HOSTILE) for r in refs])  # fmt: skip
    return snap, refs


def test_a_20000_character_name_and_hostile_characters_render_a_png() -> None:
    snap, refs = hostile_graph()
    picture = blast_dot(blast_radius(snap, "resource:default/db"))
    assert max(len(line) for line in picture.source.splitlines()) < 2_000
    assert len(picture.title) <= 160
    png = PictureRenderer.find().render_png(picture.source)
    assert png is not None and png.startswith(b"\x89PNG")
    # The two long refs share 19,999 characters and still are two nodes.
    assert picture.source.count("xxxxx#") >= 2


def test_terminal_text_carries_no_escape_sequence_or_markup() -> None:
    snap, _ = hostile_graph()
    console = Console(record=True, force_terminal=True, width=200)
    for line in render_blast(blast_radius(snap, "resource:default/db")):
        assert "\x1b" not in line.plain and "\x07" not in line.plain and "\u202e" not in line.plain
        console.print(line)
    out = console.export_text(styles=False)
    assert "]\ufffd[31m" in out  # the ESC replaced, the rest shown as written


def test_an_answer_s_sections_reach_the_terminal_with_no_escape_sequence() -> None:
    snap, _ = hostile_graph()
    lines = render_answer(ask(snap, "what breaks if db goes down?", now=snap.built_at))
    assert lines[0].plain == "db — what breaks if it fails"
    for line in lines:
        assert "\x1b" not in line.plain and "\x07" not in line.plain and "\u202e" not in line.plain
    assert any("]\ufffd[31m" in line.plain for line in lines[1:])  # in the impacted names and their citations

"""Graphviz as the renderer runs it: a real PNG, a slow or failing `dot`, and no Graphviz at all."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from bot.render.png import MISSING, PictureRenderer
from tests.bot.render.png import png_size

SOURCE = 'digraph { "resource:default/redis" -> "component:default/cart" [label="depends_on"] }\n'


def test_dot_renders_a_png_with_a_real_size() -> None:
    renderer = PictureRenderer.find()
    assert renderer.available
    width, height = png_size(renderer.render_png(SOURCE) or b"")
    assert width > 100 and height > 50


def test_without_graphviz_pictures_are_skipped_with_one_warning_per_renderer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    renderer = PictureRenderer.find(str(tmp_path))  # a PATH holding no `dot`
    with caplog.at_level(logging.WARNING, logger="bot.render.png"):
        results = [renderer.render_png(SOURCE) for _ in range(5)]
    assert results == [None] * 5
    assert [r.getMessage() for r in caplog.records] == [f"{MISSING}; answering without a picture"]
    assert renderer.missing_warning() is None  # said once already


def test_a_dot_that_hangs_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    slow = tmp_path / "dot"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    started = time.monotonic()
    rendering = PictureRenderer.find(str(tmp_path), timeout=0.5).render(SOURCE)
    assert rendering.png is None and "longer than 0.5 s" in rendering.problem
    assert time.monotonic() - started < 10


def test_a_dot_that_fails_says_why() -> None:
    rendering = PictureRenderer.find().render("digraph { a -> }")
    assert rendering.png is None
    assert "exit status 1" in rendering.problem and "syntax error" in rendering.problem

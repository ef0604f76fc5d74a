"""The `dot` the tests run where Graphviz is not installed: graphviz-pure, put on the PATH as `dot`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.render.png import PictureRenderer
from tests.bot.render.png import png_size
from tests.graphviz_dot import describe, ensure_dot

SOURCE = 'digraph { "resource:default/redis" -> "component:default/cart" [label="depends_on"] }\n'


def test_without_a_dot_on_the_path_graphviz_pure_goes_there_as_dot_and_draws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH holding no `dot`
    dot = ensure_dot()
    assert dot is not None and Path(dot).name == "dot"
    assert Path(os.path.realpath(dot)).name == "graphviz-pure"
    assert os.environ["PATH"].split(os.pathsep)[0] == str(tmp_path)  # appended: a system `dot` still wins
    assert "graphviz-pure" in describe(dot)
    width, height = png_size(PictureRenderer.find().render_png(SOURCE) or b"")
    assert width > 100 and height > 50


def test_a_dot_already_on_the_path_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = tmp_path / "dot"
    system.write_text("#!/bin/sh\necho 'dot - graphviz version 2.43.0 (0)' >&2\n")
    system.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ensure_dot() == str(system)
    assert os.environ["PATH"] == str(tmp_path)
    assert describe(str(system)) == f"dot: {system} (dot - graphviz version 2.43.0 (0))"

"""`--png FILE` on blast-radius and suspects, run as a subprocess the way a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bot.render.png import png_size

ROOT = Path(__file__).resolve().parents[3]
ACME = ROOT / "examples" / "acme"
SOURCES = ["--db", "sqlite:///:memory:", "--catalog", str(ACME / "catalog"), "--deploys", str(ACME / "deploys.jsonl")]


def run(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_"))}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *SOURCES, *args],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "answer"),
    [
        (["blast-radius", "redis"], "if redis goes down"),
        (["--now", "2026-11-29T15:00:00Z", "suspects", "payments", "--since", "6h"], "r-8812"),
    ],
)
def test_png_option_writes_a_picture_next_to_the_text_answer(tmp_path: Path, args: list[str], answer: str) -> None:
    picture = tmp_path / "answer.png"
    done = run(*args, "--png", str(picture))
    assert done.returncode == 0, done.stderr
    assert answer in done.stdout
    width, height = png_size(picture.read_bytes())
    assert width > 200 and height > 50


def test_png_works_with_json_output(tmp_path: Path) -> None:
    picture = tmp_path / "radius.png"
    done = run("blast-radius", "redis", "--json", "--png", str(picture))
    assert done.returncode == 0 and json.loads(done.stdout)["entity"] == "resource:default/redis"
    assert png_size(picture.read_bytes())[0] > 0


def test_without_graphviz_the_answer_stands_alone_with_one_warning(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    picture = tmp_path / "answer.png"
    done = run("blast-radius", "redis", "--png", str(picture), path=str(empty))
    assert done.returncode == 0
    assert "if redis goes down" in done.stdout and "token-cache" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if "Graphviz" in line]
    assert len(warnings) == 1 and str(picture) in warnings[0]
    assert "Traceback" not in done.stderr
    assert not picture.exists()


def test_a_picture_that_cannot_be_written_is_bad_usage_after_the_answer(tmp_path: Path) -> None:
    target = tmp_path / "missing-folder" / "answer.png"
    done = run("blast-radius", "redis", "--png", str(target))
    assert done.returncode == 2
    assert "if redis goes down" in done.stdout
    assert str(target) in done.stderr and "Traceback" not in done.stderr


def test_an_unresolved_name_draws_nothing(tmp_path: Path) -> None:
    picture = tmp_path / "answer.png"
    done = run("blast-radius", "redsi", "--png", str(picture))
    assert done.returncode == 1 and "redis" in done.stdout
    assert not picture.exists()

"""`oncall-graph ask` with and without ANTHROPIC_API_KEY, run as a subprocess against the fake API."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_api import API_KEY, FakeAnthropic, Reply, anthropic_api, error, text, tool_use

ROOT = Path(__file__).resolve().parents[3]
ACME = ROOT / "examples" / "acme"
SOURCES = [
    "--catalog",
    str(ACME / "catalog"),
    "--docs",
    str(ACME / "runbooks"),
    "--aliases",
    str(ACME / "aliases.yaml"),
]
QUESTION = "what breaks if redis goes down?"


def phrase_first_edge(body: dict[str, Any]) -> Reply:
    """The reader names redis; the explainer cites the first edge it was given, naming its entities."""
    if body.get("tools"):
        return tool_use("read_question", {"entities": ["redis"], "intent": "blast_radius"})
    content = body["messages"][0]["content"]
    first = re.search(r"^\[E1\] (\S+) depends on redis", content, re.MULTILINE)
    assert first, content
    return text(f"If redis fails, {first.group(1)} breaks [E1].")


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with anthropic_api() as server:
        server.responder = phrase_first_edge
        yield server


def ask(tmp_path: Path, *flags: str, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "ANTHROPIC_", "DATABASE_"))
    }
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "--db", "sqlite:///:memory:", *SOURCES, "ask", QUESTION, *flags],
        capture_output=True, text=True, cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT), **settings}, timeout=120,
    )  # fmt: skip


def test_without_a_key_ask_answers_from_the_graph_and_calls_no_model(tmp_path: Path, fake: FakeAnthropic) -> None:
    done = ask(tmp_path, "--json", ANTHROPIC_BASE_URL=fake.url)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["phrased_by"] is None and data["phrased"] is None and data["model_fallback"] is None
    assert data["entities"] == ["resource:default/redis"] and data["cited"]
    assert fake.calls == []


def test_with_a_key_ask_shows_the_model_s_phrasing_marked_and_the_graph_s_lines(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    settings = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_MODEL": "claude-cli-test"}
    done = ask(tmp_path, "--json", **settings)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["phrased_by"] == "claude-cli-test" and data["phrased_cites"] == ["E1"]
    assert data["phrased"].startswith("If redis fails,") and data["model_fallback"] is None
    assert data["cited"] and data["edges"]  # the graph's own answer is all still there
    read, explain = fake.messages()
    assert read.body["model"] == "claude-haiku-4-5" and explain.body["model"] == "claude-cli-test"
    assert "Use only the facts" in explain.body["system"]
    facts = explain.body["messages"][0]["content"]
    assert "## Runbook passages" in facts and re.search(r"^\[P1\] runbooks/redis\.md", facts, re.MULTILINE)
    terminal = ask(tmp_path, **settings)
    assert terminal.returncode == 0
    assert (
        "If redis fails," in terminal.stdout
        and "Phrased by Claude (claude-cli-test) from 1 cited fact" in terminal.stdout
    )
    assert re.search(r"\[E1\] \S+ -depends_on-> redis", terminal.stdout)


def test_an_overloaded_model_leaves_the_graph_s_answer_with_a_note(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.responder = lambda body: error(529, "overloaded")
    done = ask(tmp_path, "--json", ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=fake.url)
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["phrased_by"] is None and data["model_fallback"] == "overloaded"
    assert data["entities"] == ["resource:default/redis"] and data["answer"].startswith("If redis goes down")
    assert "model's phrasing was not used (overloaded)" in done.stderr and "Traceback" not in done.stderr

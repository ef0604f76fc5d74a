"""The question set (tests/data/questions/questions.yaml), asked through both readers: the
deterministic one, and the model's (the fake Anthropic API replying with the read a model gives:
the names as written, the asks, the window). Both must give the same answer, and never an
invented one. Test ids are `kind-number`, so the score per kind reads off the results."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.model.claude import build_model
from bot.query.model_phrasing import ModelPorts, ask_question
from bot.settings import Settings
from bot.telemetry.metrics import Metrics
from graph.naming.refs import short_name
from graph.questions.ask import Answer, ask
from graph.snapshot import Snapshot
from tests.fakes.anthropic_api import API_KEY, FakeAnthropic, anthropic_api, tool_use
from tests.questions.graphs import NOW, acme, named

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "questions" / "questions.yaml"
ROWS: list[dict[str, Any]] = yaml.safe_load(QUESTIONS.read_text())
MODEL_ASKS = {"dependencies": "dependencies", "changes": "changes", "ownership": "owners", "impact": "blast_radius",
              "affected": "blast_radius", "path": "path", "risk": "risk"}  # fmt: skip
# What the question's words ask, for a model reading a question whose names match nothing.
ASKED_OF_MISSING = {"misspelling": ["ownership"], "missing-name": ["ownership"]}


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Snapshot]:
    folder = tmp_path_factory.mktemp("question-graphs")
    return {"acme": acme(folder), "named": named(folder)}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with anthropic_api() as server:
        yield server


@pytest.fixture(scope="module")
def reader(fake: FakeAnthropic, tmp_path_factory: pytest.TempPathFactory) -> ModelPorts:
    settings = Settings(
        _env_file=None, ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_MODEL="claude-test",
        ANTHROPIC_READER_MODEL="claude-test-reader", ANTHROPIC_TIMEOUT="5",
    )  # fmt: skip
    built = build_model(settings)
    assert built is not None
    return ModelPorts(None, built[1], Metrics())  # the reader only: the graph's own sentences are checked


def model_read(row: dict[str, Any]) -> dict[str, Any]:
    """The read_question input a model gives for the row's question."""
    asks = row.get("model_asks") or list(
        dict.fromkeys(MODEL_ASKS[kind] for kind in row["asks"] or ASKED_OF_MISSING.get(row["kind"], []))
    )
    read: dict[str, Any] = {"entities": row.get("names", row["entities"]), "intent": asks[0] if asks else "unknown"}
    if asks:
        read["asks"] = asks
    if "window_hours" in row:
        read["window_hours"] = row["window_hours"]
    return read


def answered(
    row: dict[str, Any], how: str, graphs: dict[str, Snapshot], fake: FakeAnthropic, reader: ModelPorts
) -> Answer:
    snapshot = graphs[row["graph"]]
    if how == "graph":
        return ask(snapshot, row["q"], now=NOW)
    fake.queue(tool_use("read_question", model_read(row)))
    asked = ask_question(snapshot, row["q"], now=NOW, model=reader)
    assert asked.fallback == ""
    return asked.answer


@pytest.mark.parametrize("how", ["graph", "model"])
@pytest.mark.parametrize("row", ROWS, ids=[f"{row['kind']}-{i:03d}" for i, row in enumerate(ROWS)])
def test_the_answer_covers_every_ask_for_every_entity(
    row: dict[str, Any], how: str, graphs: dict[str, Snapshot], fake: FakeAnthropic, reader: ModelPorts
) -> None:
    answer = answered(row, how, graphs, fake, reader)
    assert [a.kind for a in answer.asks] == row["asks"], answer.text
    assert [short_name(e) for e in answer.entities] == row["entities"], answer.text
    if "window_hours" in row:
        windows = {a.window.total_seconds() / 3600 for a in answer.asks if a.window is not None}
        assert windows == {row["window_hours"]}, answer.text
    for said in row["says"]:
        assert said in answer.text, answer.text
    for unsaid in row.get("not_says", []):
        assert unsaid not in answer.text, answer.text


def test_the_set_covers_every_kind_with_enough_questions() -> None:
    kinds = [row["kind"] for row in ROWS]
    assert len(ROWS) >= 150
    assert {"acme", "named"} == {row["graph"] for row in ROWS}
    for kind in ("dependencies", "changes", "ownership", "impact", "affected", "path", "compound", "time",
                 "everything", "nothing", "misspelling", "missing-name", "second-name", "missing-link"):  # fmt: skip
        assert kinds.count(kind) >= 5, kind

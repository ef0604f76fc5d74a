"""Every name a question types is resolved or answered with suggestions: a question naming one entity the
graph holds and one it does not is never answered as if it named only the first."""

from __future__ import annotations

import pytest

from graph.questions.ask import AFFECTED, OWNERSHIP, ask
from graph.snapshot import Snapshot
from tests.graph.shop import c
from tests.graph.test_affected import NOW, sock_shop


@pytest.fixture(scope="module")
def shop() -> Snapshot:
    return sock_shop()


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("is front-end connected to catalouge", "'catalouge' matches no entity in the graph. Did you mean: catalogue?"),
        ("path from orders to shiping-svc", "'shiping-svc' matches no entity in the graph. Did you mean: shipping?"),
        ("does front-end call zookeeper?", "'zookeeper' matches no entity in the graph, and no name in it is close."),
        ("if rabbitmq dies does zookeeper go down?", "'zookeeper' matches no entity"),
        ("if zookeeper dies does orders go down?", "'zookeeper' matches no entity"),
        (
            "will rabbitmq going down take ordrs with it?",
            "'ordrs' matches no entity in the graph. Did you mean: orders?",
        ),
        ("orders carts-dbb", "'carts-dbb' matches no entity in the graph. Did you mean: carts-db?"),
    ],
)
def test_a_question_about_two_names_with_one_unknown_answers_only_the_suggestions(
    shop: Snapshot, question: str, note: str
) -> None:
    answer = ask(shop, question, now=NOW)
    assert answer.sections == ()  # no path, no blast radius, no dependencies of the one name found
    [said] = answer.notes
    assert said.startswith(note)
    assert [m.text for m in answer.unresolved] == [said.split("'")[1]]


def test_asks_about_each_name_answer_the_names_found_beside_the_note(shop: Snapshot) -> None:
    answer = ask(shop, "who owns orders and shiping?", now=NOW)
    assert [(s.kind, s.entities) for s in answer.sections] == [(OWNERSHIP, (c("orders"),))]
    assert answer.notes == ("'shiping' matches no entity in the graph. Did you mean: shipping?",)


@pytest.mark.parametrize(
    "question",
    [
        "who is on-call for orders?",
        "what changed in orders in the last 4h?",
        "did r-1 break orders?",  # a deploy id
        "did orders v2.3.1 go out on 2026-11-29?",
        "orders is flapping, what does that take out?",
        "what does orders depend on and did any of it change",
        "who owns orders and what does orders call?",  # the same name twice
        "if rabbitmq dies does the site go down?",
    ],
)
def test_common_words_ids_versions_and_windows_are_never_taken_for_names(shop: Snapshot, question: str) -> None:
    answer = ask(shop, question, now=NOW)
    assert answer.unresolved == () and answer.notes == (), answer.notes
    assert answer.sections


def test_two_names_found_still_answer_whether_one_breaks_with_the_other(shop: Snapshot) -> None:
    answer = ask(shop, "if rabbitmq dies does orders go down?", now=NOW)
    assert [s.kind for s in answer.sections] == [AFFECTED] and answer.unresolved == ()

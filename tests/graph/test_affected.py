"""Yes/no impact questions ("if rabbitmq dies does the catalogue go down too?"): one section per entity
asked about, saying yes with the cited path from it to the failed one, or no and why."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graph.questions.ask import AFFECTED, IMPACT, OWNERSHIP, ask
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius
from tests.graph.builders import dep, deploy, entity, snapshot
from tests.graph.shop import c

NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


def sock_shop() -> Snapshot:
    """front-end -> catalogue -> catalogue-db; front-end -> orders -> shipping -> rabbitmq <- queue-master;
    front-end -soft-> carts -> carts-db; orders deployed an hour ago (r-1)."""
    edges = [
        ("front-end", "catalogue"), ("catalogue", "catalogue-db"), ("front-end", "orders"), ("orders", "shipping"),
        ("shipping", "rabbitmq"), ("queue-master", "rabbitmq"), ("front-end", "carts"), ("carts", "carts-db"),
    ]  # fmt: skip
    names = {n for pair in edges for n in pair}
    soft = {"oncall-graph/soft-dependencies": c("carts")}
    entities = [entity(c(n), annotations=soft if n == "front-end" else None) for n in sorted(names)]
    return snapshot(entities, [dep(c(a), c(b)) for a, b in edges], [deploy("r-1", "orders", "2026-11-29T14:00:00Z")])


@pytest.fixture(scope="module")
def shop() -> Snapshot:
    return sock_shop()


@pytest.mark.parametrize(
    ("question", "asked", "failing", "first_line"),
    [
        ("if rabbitmq dies does the catalogue go down too?", "catalogue", "rabbitmq",
         "No: catalogue does not depend on rabbitmq, directly or through anything else; rabbitmq going down"
         " leaves it up."),
        ("does orders break if rabbitmq fails", "orders", "rabbitmq", "Yes: orders breaks if rabbitmq goes down."),
        ("would front-end be affected by a rabbitmq outage?", "front-end", "rabbitmq",
         "Yes: front-end breaks if rabbitmq goes down."),
        ("is front-end impacted when carts-db is down", "front-end", "carts-db",
         "No, it degrades: front-end does not break if carts-db goes down, but it degrades."),
        ("will rabbitmq going down take queue-master with it?", "queue-master", "rabbitmq",
         "Yes: queue-master breaks if rabbitmq goes down."),
        ("can catalogue survive shipping going down?", "catalogue", "shipping", "Yes: catalogue does not depend"),
        ("can front-end survive a carts-db outage?", "front-end", "carts-db",
         "Yes, degraded: front-end does not break"),
        ("does losing catalogue-db break front-end", "front-end", "catalogue-db", "Yes: front-end breaks"),
        ("shipping is down. is orders affected?", "orders", "shipping", "Yes: orders breaks if shipping goes down."),
        ("what happens to orders when rabbitmq crashes", "orders", "rabbitmq", "Yes: orders breaks"),
        ("would an outage of rabbitmq take down the front-end", "front-end", "rabbitmq", "Yes: front-end breaks"),
        ("Is Orders still up if RabbitMQ dies?", "orders", "rabbitmq", "No: orders breaks if rabbitmq goes down."),
    ],
)  # fmt: skip
def test_a_yes_no_impact_question_is_answered_in_one_section(
    shop: Snapshot, question: str, asked: str, failing: str, first_line: str
) -> None:
    answer = ask(shop, question, now=NOW)
    [section] = answer.sections
    assert (section.kind, section.entities) == (AFFECTED, (c(asked), c(failing)))
    assert section.title == f"{asked} — if {failing} goes down"
    assert section.lines[0].startswith(first_line), section.lines
    assert [(a.kind, a.entities) for a in answer.asks] == [(AFFECTED, (c(asked), c(failing)))]


def test_yes_cites_the_path_from_the_asked_entity_to_the_failed_one(shop: Snapshot) -> None:
    [section] = ask(shop, "would front-end be affected by a rabbitmq outage?", now=NOW).sections
    chain = "front-end -depends_on-> orders -depends_on-> shipping -depends_on-> rabbitmq"
    assert section.lines[1] == f"front-end depends on rabbitmq (3 hops): {chain}."
    assert [(e.src, e.dst) for e in section.edges] == [
        (c("front-end"), c("orders")), (c("orders"), c("shipping")), (c("shipping"), c("rabbitmq")),
    ]  # fmt: skip


def test_a_soft_path_says_it_degrades_and_names_the_soft_edge(shop: Snapshot) -> None:
    [section] = ask(shop, "does front-end break if carts-db dies?", now=NOW).sections
    assert section.lines[1] == (
        "front-end depends on carts-db (2 hops) only through a soft dependency (front-end -depends_on-> carts):"
        " front-end -depends_on-> carts -depends_on-> carts-db."
    )
    assert [e.soft for e in section.edges] == [True, False]


def test_no_path_says_so_and_names_the_path_the_other_way_when_there_is_one(shop: Snapshot) -> None:
    [section] = ask(shop, "if front-end dies does catalogue go down?", now=NOW).sections
    assert section.lines == (
        "No: catalogue does not depend on front-end, directly or through anything else; front-end going down"
        " leaves it up.",
        "It is the other way round: front-end depends on catalogue (front-end -depends_on-> catalogue), so"
        " front-end breaks if catalogue goes down.",
    )
    assert [(e.src, e.dst) for e in section.edges] == [(c("front-end"), c("catalogue"))]
    [alone] = ask(shop, "if rabbitmq dies does the catalogue go down too?", now=NOW).sections
    assert alone.edges == ()


def test_each_entity_asked_about_gets_its_own_section(shop: Snapshot) -> None:
    answer = ask(shop, "if rabbitmq dies do orders, catalogue and queue-master go down?", now=NOW)
    assert [(s.kind, s.entities) for s in answer.sections] == [
        (AFFECTED, (c("orders"), c("rabbitmq"))), (AFFECTED, (c("catalogue"), c("rabbitmq"))),
        (AFFECTED, (c("queue-master"), c("rabbitmq"))),
    ]  # fmt: skip
    assert [s.lines[0].split(":")[0] for s in answer.sections] == ["Yes", "No", "Yes"]


@pytest.mark.parametrize(
    "question",
    [
        "what breaks if rabbitmq or catalogue-db goes down?",  # two failures, nobody asked about
        "blast radius of shipping and orders",
        "who is affected if rabbitmq dies, and what about catalogue?",  # a blast radius first
        "if rabbitmq and carts-db both die does front-end go down?",  # several failing at once: not one path
    ],
)
def test_questions_that_ask_for_blast_radii_keep_them(shop: Snapshot, question: str) -> None:
    answer = ask(shop, question, now=NOW)
    assert AFFECTED not in [s.kind for s in answer.sections]
    assert IMPACT in [s.kind for s in answer.sections]


def test_other_asks_of_a_yes_no_question_are_still_answered(shop: Snapshot) -> None:
    answer = ask(shop, "if rabbitmq dies does shipping go down, and who owns it?", now=NOW)
    assert [s.kind for s in answer.sections] == [OWNERSHIP, OWNERSHIP, AFFECTED]


def test_impact_on_one_entity_is_its_entry_of_the_whole_blast_radius(shop: Snapshot) -> None:
    radius = blast_radius(shop, c("rabbitmq"))
    by_entity = {i.entity: i for i in radius.impacted}
    assert radius.impact_on(c("front-end")) == by_entity[c("front-end")]
    assert radius.impact_on(c("rabbitmq")) is None  # the failed one itself
    assert radius.impact_on(c("catalogue")) is None
    assert radius.impact_on("component:default/nowhere") is None
    soft = blast_radius(shop, c("carts-db")).impact_on(c("front-end"))
    assert soft is not None and soft.impact == "degrades"

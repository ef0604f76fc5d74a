"""A question's answer in Slack: one headed section per ask per entity, each followed by its cited
edges, validated by slack_sdk's Block Kit models and kept inside Slack's limits however many asks,
entities or lines it has."""

from __future__ import annotations

import html
import re

import pytest

from bot.render.freshness import freshness_of
from bot.slack.blocks.kit import SlackMessage, text_length
from bot.slack.blocks.messages import format_answer
from graph.health.freshness import StalePolicy
from graph.questions.ask import ask
from graph.snapshot import Snapshot
from tests.bot.slack.test_blocks import assert_within_limits, c, fresh, judged
from tests.graph.builders import dep, entity, snapshot
from tests.questions.graphs import NOW, acme

HEADLINE = "what does payments call, which of those changed in the last six hours, and who owns each?"


@pytest.fixture(scope="module")
def acme_graph(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    return acme(tmp_path_factory.mktemp("acme"))


def sections(message: SlackMessage) -> list[str]:
    """The text of each section block, mrkdwn entities decoded."""
    return [html.unescape(b["text"]["text"]) for b in message.blocks if b["type"] == "section"]


def headed(message: SlackMessage) -> dict[str, tuple[str, str]]:
    """Each heading's section: (its lines, the code block of cited edges right after it, or "")."""
    found: dict[str, tuple[str, str]] = {}
    texts = sections(message)
    for i, text in enumerate(texts):
        match = re.match(r"\*(.+?)\*\n(.*)", text, re.DOTALL)
        if match:
            following = texts[i + 1] if i + 1 < len(texts) and texts[i + 1].startswith("```") else ""
            found[match.group(1)] = (match.group(2), following)
    return found


def test_the_headline_question_answers_each_ask_in_its_own_cited_section(acme_graph: Snapshot) -> None:
    message = format_answer(ask(acme_graph, HEADLINE, now=NOW), freshness_of(acme_graph, NOW, StalePolicy()))
    assert_within_limits(message)
    parts = headed(message)
    assert list(parts) == ["payments — depends on", "payments — changed in the last 6 h", "payments — owners"]
    lines, cites = parts["payments — depends on"]
    listed = "antifraud (risk-team), ledger (finance-team), notify (msg-team) and postgresql (platform)"
    assert lines == f"payments depends on {listed}."
    assert "payments -depends_on-> antifraud [catalog/payments.yaml#3] x1" in cites
    lines, cites = parts["payments — changed in the last 6 h"]
    assert "antifraud (risk-team) was deployed: r-8812 v2.3.1 at 2026-11-29 14:05 UTC" in lines
    assert "r-8790" not in lines  # payments' own deploy, 7.5 hours before now: outside the window
    assert cites.splitlines()[1:-1] == [
        "payments -depends_on-> antifraud [catalog/payments.yaml#3] x1",
        "payments -depends_on-> notify [catalog/payments.yaml#3] x1",
    ]
    lines, cites = parts["payments — owners"]
    assert lines.splitlines()[0] == "payments is owned by platform."
    assert "antifraud is owned by risk-team." in lines.splitlines()
    assert "payments -owned_by-> platform [catalog/payments.yaml#3] x1" in cites
    assert "antifraud -owned_by-> risk-team [catalog/payments.yaml#4] x1" in cites
    assert message.text.startswith("payments — depends on · payments depends on antifraud")
    assert message.full_text is None


def test_a_two_entity_owner_question_has_one_section_per_entity(acme_graph: Snapshot) -> None:
    answer = ask(acme_graph, "who owns redis and the token cache?", now=NOW)
    message = format_answer(answer, freshness_of(acme_graph, NOW, StalePolicy()))
    assert_within_limits(message)
    parts = headed(message)
    assert list(parts) == ["redis — owners", "token-cache — owners"]
    assert parts["redis — owners"][0] == "redis is owned by sre."
    assert "redis -owned_by-> sre [catalog/edge.yaml#4] x1" in parts["redis — owners"][1]
    assert "token-cache" not in parts["redis — owners"][1]  # each section cites its own edges
    assert parts["token-cache — owners"][0] == "token-cache is owned by identity-team."
    assert "token-cache -owned_by-> identity-team" in parts["token-cache — owners"][1]


def test_a_question_about_everything_is_one_section_headed_by_its_window(acme_graph: Snapshot) -> None:
    message = format_answer(ask(acme_graph, "what got deployed in the last 2 hours?", now=NOW), judged(acme_graph))
    assert_within_limits(message)
    [(title, (lines, _))] = headed(message).items()
    assert title == "changed in the last 2 h"
    assert lines.startswith("5 deploys in the last 2 hours:")


def test_a_question_naming_nothing_has_notes_and_no_section(acme_graph: Snapshot) -> None:
    message = format_answer(ask(acme_graph, "hello?", now=NOW), judged(acme_graph))
    assert_within_limits(message)
    assert headed(message) == {}
    assert "For example:" in "\n".join(sections(message))


def many(count: int) -> Snapshot:
    """`count` services, each owned by its team and depending on one database."""
    db = "resource:default/db"
    refs = [c(f"svc-{i:03d}") for i in range(count)]
    entities = [entity(db), *(entity(r, owner=f"group:default/team-{i:03d}") for i, r in enumerate(refs))]
    entities += [entity(f"group:default/team-{i:03d}") for i in range(count)]
    edges = [dep(r, db) for r in refs] + [
        dep(r, f"group:default/team-{i:03d}", rel="owned_by") for i, r in enumerate(refs)
    ]
    return fresh(snapshot(entities, edges))


def test_sections_past_slack_s_block_limit_end_in_and_n_more_with_the_whole_answer_attached() -> None:
    snap = many(40)
    question = "what do " + ", ".join(f"svc-{i:03d}" for i in range(40)) + " depend on and who owns them?"
    answer = ask(snap, question, now=NOW)
    assert len(answer.sections) == 80  # dependencies and owners, for each of the 40
    message = format_answer(answer, judged(snap))
    assert_within_limits(message)
    shown = list(headed(message))
    assert 10 < len(shown) < 80 and shown[0] == "svc-000 — depends on"
    more = 80 - len(shown)
    assert f"… and {more} more sections" in html.unescape(str(message.blocks))
    assert text_length(message.blocks) <= 9000
    assert message.full_text is not None
    assert "svc-039 — owners" in message.full_text and "svc-039 is owned by team-039." in message.full_text


def hub(count: int) -> Snapshot:
    """One hub depending on `count` services with long names, each owned by its team."""
    long_name = "with-a-deliberately-long-name-to-fill-slack-sections"
    refs = [c(f"part-{i:03d}-{long_name}") for i in range(count)]
    entities = [entity(c("hub"), owner="group:default/core"), entity("group:default/core")]
    entities += [entity(r, owner=f"group:default/team-{i:03d}") for i, r in enumerate(refs)]
    entities += [entity(f"group:default/team-{i:03d}") for i in range(count)]
    edges = [dep(c("hub"), r) for r in refs] + [dep(c("hub"), "group:default/core", rel="owned_by")]
    edges += [dep(r, f"group:default/team-{i:03d}", rel="owned_by") for i, r in enumerate(refs)]
    return fresh(snapshot(entities, edges))


def test_a_section_longer_than_its_share_ends_in_and_n_more_lines_and_cited_edges() -> None:
    snap = hub(200)
    answer = ask(snap, "what does hub depend on and who owns each?", now=NOW)
    message = format_answer(answer, judged(snap))
    assert_within_limits(message)
    parts = headed(message)
    assert list(parts) == ["hub — depends on", "hub — owners"]
    owners, cites = parts["hub — owners"]
    said = owners.splitlines()
    assert said[0] == "hub is owned by core."
    assert said[-1] == f"… and {201 - (len(said) - 1)} more"  # 201 owner lines: hub's and its 200 parts'
    cited = cites.splitlines()[1:-1]
    assert cited[-1] == f"… and {201 - (len(cited) - 1)} more cited"
    dependencies, _ = parts["hub — depends on"]
    assert dependencies.splitlines()[0].endswith("…")  # one sentence naming 200 parts, clipped
    for text in sections(message):
        assert len(text) <= 3000
    assert message.full_text is not None
    assert "part-199-with-a-deliberately-long-name-to-fill-slack-sections is owned by team-199." in message.full_text
    assert "hub — owners" in message.full_text

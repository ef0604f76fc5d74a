"""Citations that open their source, on every front: JSON's `citations` beside `sources`, the URL
beside each receipt in the terminal, Slack's links beside each cited edge and the sources card; only
http(s) URLs ever made links, named by what the source is, never by text that reads as another host;
the URL of a citation that names a hidden entity goes where that citation goes."""

from __future__ import annotations

import html
import json
from datetime import timedelta

from slack_sdk.models.blocks import Block

from bot.render.json import blast_json, suspects_json
from bot.render.text import render_blast, render_suspects
from bot.slack.blocks.blast import blast_lines, impact_lines, impact_row
from bot.slack.blocks.messages import format_answer, format_blast_radius, format_suspects
from graph.exposure.redaction import HIDDEN_SOURCE
from graph.facts import Assertion, Citation, Deploy
from graph.questions.ask import ask
from graph.traffic.live import NOTHING, LiveBlast
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects
from tests.bot.slack.test_blocks import NOW, OUTSIDER, RESTRICTED, assert_within_limits, c, fresh, judged, of_type
from tests.graph.builders import dep, entity, snapshot

LONG = "with-a-name-long-enough-that-entries-with-their-paths-fit-few"
FILE_URL = "https://git.example.com/acme/payments/blob/main/catalog-info.yaml"
PAGE_URL = "https://acme.pagerduty.com/service-directory/P1"


def cited(src: str, dst: str, locator: str, url: str) -> Assertion:
    return Assertion(src, "depends_on", dst, Citation("catalog", locator, origin=locator, url=url))


def linked_shop(*more: Assertion, web_url: str = FILE_URL):
    entities = [entity(c(n)) for n in ("web", "checkout", "payments", "ledger")]
    edges = [
        cited(c("checkout"), c("payments"), "catalog/payments.yaml#1", web_url),
        cited(c("web"), c("checkout"), "pagerduty:R1", PAGE_URL),
        dep(c("payments"), c("ledger")),  # no URL known
        *more,
    ]
    return fresh(snapshot(entities, edges))


def test_json_gives_each_source_its_url_beside_the_unchanged_sources() -> None:
    snap = linked_shop()
    data = blast_json("payments", blast_radius(snap, c("payments")))
    found = {(e["src"], e["dst"]): e for i in data["impacted"] for e in i["edges"]}
    edge = found[(c("checkout"), c("payments"))]
    assert edge["sources"] == ["catalog/payments.yaml#1"]
    assert edge["citations"] == [{"source": "catalog/payments.yaml#1", "url": FILE_URL}]
    assert found[(c("web"), c("checkout"))]["citations"] == [{"source": "pagerduty:R1", "url": PAGE_URL}]
    ledger = suspects_json("payments", suspects(snap, c("payments"), now=NOW))
    (dependency,) = ledger["dependencies"]
    assert dependency["edges"][0]["citations"] == [{"source": "catalog/payments.yaml#1", "url": None}]


def test_a_hostile_url_is_null_in_json_absent_from_text_and_never_a_slack_link() -> None:
    for hostile in ("javascript:alert(1)", "data:text/html,hi", "https://ok.example/\u202ehi", "//evil.example/x"):
        snap = linked_shop(web_url=hostile)
        result = blast_radius(snap, c("payments"))
        found = {(e["src"], e["dst"]): e for i in blast_json("p", result)["impacted"] for e in i["edges"]}
        assert found[(c("checkout"), c("payments"))]["citations"][0]["url"] is None, hostile
        assert hostile not in "\n".join(line.plain for line in render_blast(result))
        message = format_blast_radius(result, judged(snap))
        assert hostile not in json.dumps(message.blocks, ensure_ascii=False), hostile
        assert_within_limits(message)


def test_slack_links_each_cited_edge_to_its_source_named_by_what_it_is_and_cards_them() -> None:
    snap = linked_shop()
    message = format_blast_radius(blast_radius(snap, c("payments")), judged(snap))
    assert_within_limits(message)
    text = "\n".join(b["text"]["text"] for b in of_type(message, "section"))
    assert f"<{PAGE_URL}|PagerDuty>" in text
    # `payments.yaml` reads as a host name: shown plain beside a link named by the host it goes to.
    assert f"payments.yaml (<{FILE_URL}|git.example.com>)" in text
    full = "".join(blast_lines(blast_radius(snap, c("payments")), judged(snap)))  # the text a cut answer attaches
    assert f"  ↗ catalog/payments.yaml#1 {FILE_URL}\n" in full and f"  ↗ pagerduty:R1 {PAGE_URL}\n" in full
    (card,) = of_type(message, "task_card")
    assert Block.parse(card) is not None
    assert card["sources"] == [
        {"type": "url", "url": FILE_URL, "text": "git.example.com"},
        {"type": "url", "url": PAGE_URL, "text": "PagerDuty"},
    ]


def test_a_label_that_reads_as_another_host_never_names_a_link() -> None:
    locator = "catalog/login.bank.example.yaml#1"
    snap = fresh(
        snapshot(
            [entity(c("a")), entity(c("b"))],
            [cited(c("a"), c("b"), locator, "https://phish.example/x")],
        )
    )
    message = format_blast_radius(blast_radius(snap, c("b")), judged(snap))
    blocks = json.dumps(message.blocks)
    assert "|login.bank.example.yaml>" not in blocks
    assert "login.bank.example.yaml (<https://phish.example/x|phish.example>)" in blocks
    (card,) = of_type(message, "task_card")
    assert card["sources"][0]["text"] == "phish.example"


def test_the_url_of_a_citation_naming_a_hidden_entity_is_hidden_with_it() -> None:
    vault_url = "https://git.example.com/acme/vault-proxy.yaml"
    entities = [entity(c("web")), entity(c("auth")), entity(c("vault-proxy"), annotations=RESTRICTED)]
    edges = [
        cited(c("web"), c("auth"), "runbooks/vault-proxy.md:3", vault_url),  # its locator names the hidden one
        cited(c("web"), c("auth"), "catalog/web.yaml#1", "https://git.example.com/acme/vault-proxy/web.yaml"),
    ]
    snap = fresh(snapshot(entities, edges))
    result = blast_radius(snap, c("auth"), viewer=OUTSIDER)
    (edge,) = [e for i in blast_json("auth", result)["impacted"] for e in i["edges"]]
    # The citation naming it reads HIDDEN_SOURCE with no URL; a URL alone naming it is dropped.
    assert edge["citations"] == [{"source": HIDDEN_SOURCE, "url": None}, {"source": "catalog/web.yaml#1", "url": None}]
    everything = json.dumps(format_blast_radius(result, judged(snap)).blocks) + json.dumps(edge)
    everything += "\n".join(line.plain for line in render_blast(result))
    assert "vault" not in everything


def test_a_blast_radius_too_long_for_its_paths_is_one_valid_table_with_the_next_hop_and_its_provenance() -> None:
    hub = c("payments")
    refs = [c(f"svc-{i}-{LONG}") for i in range(150)]
    entities = [entity(hub), entity("group:default/pay"), *(entity(r) for r in refs)]
    edges = [dep(r, hub) for r in refs] + [dep(r, "group:default/pay", rel="owned_by") for r in refs]
    edges.append(dep(c("edge"), refs[0]))
    entities.append(entity(c("edge")))
    snap = fresh(snapshot(entities, edges))
    result = blast_radius(snap, hub)
    message = format_blast_radius(result, judged(snap))
    assert_within_limits(message)
    (table,) = of_type(message, "table")
    rows = [[cell["text"] for cell in row] for row in table["rows"]]
    assert rows[0] == ["entity", "impact", "hops", "owners", "via"]
    assert [f"svc-0-{LONG}", "breaks", "1", "pay", "payments (declared)"] in rows
    (far,) = [i for i in result.impacted if i.entity == c("edge")]  # past the rows shown: its row as built
    row = impact_row(far, LiveBlast(result, NOTHING))
    assert row == ("edge", "breaks", "2", "none known", f"svc-0-{LONG} (declared)")
    # More rows than entries with their paths would have shown, inside the blocks' JSON budget.
    lines, entries = impact_lines(LiveBlast(result, NOTHING).first(60), 9000, LiveBlast(result, NOTHING))
    assert len(rows) - 1 > entries
    assert sum(len(json.dumps(b)) for b in message.blocks) < 14_000
    seen = html.unescape(json.dumps(message.blocks, ensure_ascii=False))
    assert f"… and {151 - (len(rows) - 1)} more impacted entities" in seen
    assert message.full_text is not None and f"svc-149-{LONG} -depends_on-> payments" in message.full_text


def test_a_short_blast_radius_keeps_its_cited_paths_inline_and_no_table() -> None:
    snap = linked_shop()
    message = format_blast_radius(blast_radius(snap, c("payments")), judged(snap))
    assert not of_type(message, "table")


def test_suspects_too_many_for_entries_keep_those_with_deploys_and_table_the_quiet_rest() -> None:
    root = c("web")
    refs = [c(f"dep-{i}-{LONG}") for i in range(120)]
    deploy_url = "https://ci.example.com/r-8812"
    citation = Citation("deploys", "deploys.jsonl:r-8812", origin="deploy:r-8812")
    shipped = Deploy("r-8812", f"dep-3-{LONG}", NOW - timedelta(minutes=30), citation, version="v2", url=deploy_url)
    snap = fresh(snapshot([entity(root), *(entity(r) for r in refs)], [dep(root, r) for r in refs], [shipped]))
    found = suspects(snap, root, now=NOW)
    message = format_suspects(found, judged(snap))
    assert_within_limits(message)
    (table,) = of_type(message, "table")
    tabled = [row[0]["text"] for row in table["rows"][1:]]
    assert f"dep-3-{LONG}" not in tabled and f"dep-0-{LONG}" in tabled and len(tabled) > 20
    assert sum(len(json.dumps(b)) for b in message.blocks) < 14_000
    seen = html.unescape(json.dumps(message.blocks))
    assert f"<{deploy_url}|r-8812> (ci.example.com)" in seen
    (card,) = of_type(message, "task_card")
    assert {"type": "url", "url": deploy_url, "text": "deploy r-8812"} in card["sources"]
    lines = "\n".join(line.plain for line in render_suspects(found))
    assert f"↗ deploy r-8812 {deploy_url}" in lines
    (suspected,) = [d for d in suspects_json("web", found)["dependencies"] if d["deploys"]]
    assert suspected["deploys"][0]["citations"] == [{"source": "deploys.jsonl:r-8812", "url": deploy_url}]


def test_a_questions_answer_cards_the_sources_of_its_cited_edges() -> None:
    snap = linked_shop()
    message = format_answer(ask(snap, "what does checkout depend on?", now=NOW), judged(snap))
    assert_within_limits(message)
    (card,) = of_type(message, "task_card")
    assert {"type": "url", "url": FILE_URL, "text": "git.example.com"} in card["sources"]

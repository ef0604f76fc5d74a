"""Slack answers as Block Kit: what they say, what they cite, and that they always fit Slack's limits."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk.models.blocks import Block, BlockElement

from bot.query.durations import parse_window
from bot.render.freshness import Freshness, freshness_of
from bot.slack.blocks.kit import cited
from bot.slack.blocks.messages import (
    SlackMessage,
    format_alert_reply,
    format_answer,
    format_blast_radius,
    format_lag,
    format_lag_alert,
    format_refusal,
    format_suspects,
    format_unresolved,
    text_length,
)
from graph.exposure.passages import CitedPassage
from graph.exposure.visibility import Viewer
from graph.facts import Citation, Deploy, Passage, SourceMark
from graph.health.freshness import DEFAULT_STALE_INTERVALS, LagTransition, StalePolicy, judge
from graph.naming.names import resolve
from graph.questions.ask import ask
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects
from tests.graph.builders import BUILT_AT, dep, entity, snapshot

NOW = BUILT_AT + timedelta(minutes=4)
RESTRICTED = {"oncall-graph/visibility": "restricted", "oncall-graph/allowed-channels": "C-SEC"}
OUTSIDER = Viewer(channel="C-OPS", user="U-SRE")


def c(name: str) -> str:
    return f"component:default/{name}"


def judged(snap: Snapshot, *, limit: float = 900) -> Freshness:
    """The freshness verdict every answer bundle carries: every source's limit `limit` seconds."""
    return freshness_of(snap, NOW, StalePolicy(interval=limit / DEFAULT_STALE_INTERVALS))


def fresh(snap: Snapshot, **errors: str) -> Snapshot:
    error = errors.get("catalog", "")
    marks = {"catalog": SourceMark("catalog", last_success=NOW - timedelta(minutes=4), last_error=error)}
    marks["deploys"] = SourceMark("deploys", last_success=NOW - timedelta(minutes=1))
    return snap.with_marks(marks)


def shop() -> Snapshot:
    """checkout -> login-flow -> auth-service; redis stands apart; auth-service owned by identity."""
    return fresh(
        snapshot(
            [
                entity(c("auth-service"), owner="group:default/identity"),
                entity(c("login-flow"), owner="group:default/web"),
                entity(c("checkout"), owner="group:default/payments"),
                entity("resource:default/redis"),
                entity("group:default/identity"),
                entity("group:default/web"),
                entity("group:default/payments"),
            ],
            [
                dep(c("auth-service"), "group:default/identity", rel="owned_by"),
                dep(c("login-flow"), "group:default/web", rel="owned_by"),
                dep(c("checkout"), "group:default/payments", rel="owned_by"),
                dep(c("login-flow"), c("auth-service")),
                dep(c("checkout"), c("login-flow")),
            ],
        )
    )


def deploy(
    id: str, service: str, at: datetime, *, url: str = "", actor: str = "alice", version: str = "v2.3.1"
) -> Deploy:
    citation = Citation("deploys", f"deploys.jsonl:{id}", origin=f"deploy:{id}")
    return Deploy(id, service, at, citation, version=version, environment="production", actor=actor, url=url)


def payments() -> Snapshot:
    """payments -> antifraud -> redis; antifraud and payments deployed recently, redis long ago."""
    return fresh(
        snapshot(
            [
                entity(c("payments"), owner="group:default/checkout-team"),
                entity(c("antifraud"), owner="group:default/risk"),
                entity("resource:default/redis", owner="group:default/platform"),
                entity("group:default/risk"),
                entity("group:default/platform"),
                entity("group:default/checkout-team"),
            ],
            [
                dep(c("payments"), c("antifraud")),
                dep(c("antifraud"), "resource:default/redis"),
                dep(c("antifraud"), "group:default/risk", rel="owned_by"),
                dep("resource:default/redis", "group:default/platform", rel="owned_by"),
                dep(c("payments"), "group:default/checkout-team", rel="owned_by"),
            ],
            [
                deploy("r-8812", "antifraud", NOW - timedelta(minutes=55), url="https://ci.example.com/r-8812"),
                deploy("r-0001", "redis", NOW - timedelta(days=2)),
                deploy("r-7000", "payments", NOW - timedelta(hours=1), url="https://ci.example.com/r-7000"),
            ],
        )
    )


def crowd(count: int) -> Snapshot:
    """`count` services with long names, owned by one team, all depending on one database."""
    db = "resource:default/db"
    long_name = "with-a-deliberately-long-name-to-fill-slack-sections-quickly-and-then-some"
    refs = [c(f"service-{i:04d}-{long_name}") for i in range(count)]
    entities = [entity(db), entity("group:default/team-a"), *(entity(r) for r in refs)]
    edges = [dep(r, db, at=f"catalog/very/long/path/to/descriptor-{i:04d}.yaml#1") for i, r in enumerate(refs)]
    edges += [dep(r, "group:default/team-a", rel="owned_by") for r in refs]
    return fresh(snapshot(entities, edges))


def texts(value: object) -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in ([v] if k == "text" and isinstance(v, str) else texts(v))]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in texts(v)]
    return []


def shown(message: SlackMessage) -> str:
    """Everything a reader sees, mrkdwn entities decoded."""
    return html.unescape("\n".join([message.text, *texts(list(message.blocks))]))


def of_type(message: SlackMessage, kind: str) -> list[dict[str, Any]]:
    return [b for b in message.blocks if b["type"] == kind]


def buttons(message: SlackMessage) -> list[dict[str, Any]]:
    return [e for b in of_type(message, "actions") for e in b["elements"]]


def assert_within_limits(message: SlackMessage) -> None:
    assert 0 < len(message.blocks) <= 50
    assert text_length(message.blocks) <= 10_000
    assert len(message.text) <= 400
    for block in message.blocks:
        parsed = Block.parse(block)
        assert parsed is not None, block
        parsed.validate_json()
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= 3000
            assert len(block.get("fields", [])) <= 10
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= 150
        if block["type"] == "actions":
            assert len(block["elements"]) <= 25
            for element in block["elements"]:
                button = BlockElement.parse(element)
                assert button is not None
                button.validate_json()
                assert len(element["text"]["text"]) <= 75
                assert len(element["value"]) <= 2000


def test_blast_radius_names_each_impacted_entity_with_owners_and_cited_path() -> None:
    snap = shop()
    message = format_blast_radius(blast_radius(snap, c("auth-service")), judged(snap))
    assert_within_limits(message)
    seen = shown(message)
    assert of_type(message, "header")[0]["text"]["text"] == "Blast radius: auth-service"
    assert "If auth-service goes down: 2 break · 0 degrade · 0 systems impacted" in seen
    assert "`login-flow -depends_on-> auth-service [catalog/login-flow.yaml#1] x1`" in seen
    assert "login-flow* breaks · owners: web" in seen
    assert "checkout* breaks · owners: payments" in seen
    # The farther entity shows its whole chain, read from itself back to the failure.
    checkout = seen[seen.index("*checkout*") :]
    assert checkout.index("checkout -depends_on-> login-flow") < checkout.index("login-flow -depends_on-> auth-service")
    assert seen.index("*1 hop*") < seen.index("*login-flow*") < seen.index("*2 hops*") < seen.index("*checkout*")
    assert message.full_text is None


def test_blast_radius_escapes_arrows_for_mrkdwn() -> None:
    snap = shop()
    message = format_blast_radius(blast_radius(snap, c("auth-service")), judged(snap))
    raw = "\n".join(texts(list(message.blocks)))
    assert "-depends_on-&gt; auth-service" in raw
    assert "->" not in raw


def test_an_entity_reached_only_through_a_soft_dependency_degrades() -> None:
    soft = {"oncall-graph/soft-dependencies": "recommendations"}
    snap = fresh(
        snapshot(
            [entity(c("web"), annotations=soft), entity(c("recommendations"))],
            [dep(c("web"), c("recommendations"))],
        )
    )
    seen = shown(format_blast_radius(blast_radius(snap, c("recommendations")), judged(snap)))
    assert "0 break · 1 degrade" in seen
    assert "~ *web* degrades" in seen
    assert "`web -depends_on-> recommendations (soft) [catalog/web.yaml#1] x1`" in seen


def test_blast_radius_summarizes_survivors() -> None:
    snap = shop()
    message = format_blast_radius(blast_radius(snap, c("checkout")), judged(snap))
    survivors = next(t for t in texts(list(message.blocks)) if t.startswith("*Survives*"))
    assert survivors == "*Survives* (3): auth-service, login-flow, redis"
    # "Nothing" says how much the graph could know: how many components declare their dependencies.
    assert "No dependents of checkout are declared or observed." in shown(message)
    assert "components declare dependencies; no trace source is configured." in shown(message)


def test_blast_radius_footer_shows_the_graph_age_and_no_warning_when_fresh() -> None:
    snap = shop()
    message = format_blast_radius(blast_radius(snap, c("auth-service")), judged(snap, limit=3600))
    footer = of_type(message, "context")[-1]["elements"][0]["text"]
    assert footer.startswith("graph 4 min old (oldest: catalog, synced 2026-11-29 15:00 UTC)")
    assert "stale" not in shown(message)


def test_an_old_graph_carries_a_visible_stale_warning() -> None:
    snap = shop()
    message = format_blast_radius(blast_radius(snap, c("auth-service")), judged(snap, limit=120))
    warning = message.blocks[1]
    assert warning["type"] == "section"
    assert warning["text"]["text"].startswith("⚠ *stale graph*: catalog last synced 4 min ago (limit 2 min)")
    assert "deploys" not in warning["text"]["text"]
    assert message.text.startswith("⚠ stale graph — If auth-service goes down")


def test_a_failing_source_is_called_out_even_without_a_staleness_limit() -> None:
    snap = fresh(shop(), catalog="GET https://backstage/api/catalog/entities: 503 <html>")
    message = format_suspects(suspects(snap, c("checkout"), now=NOW), judged(snap))
    seen = shown(message)
    assert "⚠ *stale graph*: catalog last sync failed: GET https://backstage/api/catalog/entities: 503 <html>" in seen
    assert "&lt;html&gt;" in message.blocks[1]["text"]["text"]


def test_share_button_value_reruns_the_same_blast_radius() -> None:
    snap = shop()
    message = format_blast_radius(blast_radius(snap, c("auth-service"), max_depth=1), judged(snap))
    [share] = buttons(message)
    assert share["action_id"] == "share_answer"
    assert json.loads(share["value"]) == {"cmd": "blast-radius", "name": c("auth-service"), "depth": 1}
    assert "walk limited to 1 hop" in shown(message)


def test_a_shared_answer_has_no_share_button() -> None:
    snap = payments()
    assert buttons(format_blast_radius(blast_radius(snap, "resource:default/redis"), judged(snap), shared=True)) == []
    assert buttons(format_suspects(suspects(snap, c("payments"), now=NOW), judged(snap), shared=True)) == []


def test_hidden_entities_are_counted_and_never_named() -> None:
    snap = fresh(
        snapshot(
            [
                entity(c("auth-service")),
                entity(c("vault-proxy"), annotations=RESTRICTED, owner="group:default/secops"),
                entity(c("web"), owner="group:default/web"),
                entity("group:default/web"),
                entity("group:default/secops"),
            ],
            [
                dep(c("vault-proxy"), c("auth-service")),
                dep(c("web"), c("vault-proxy")),
                dep(c("web"), "group:default/web", rel="owned_by"),
                dep(c("vault-proxy"), "group:default/secops", rel="owned_by"),
            ],
        )
    )
    result = blast_radius(snap, c("auth-service"), viewer=OUTSIDER)
    message = format_blast_radius(result, judged(snap))
    seen = shown(message)
    assert "2 break · 0 degrade · 0 systems impacted · 1 hidden here" in seen
    assert "web* breaks · owners: web" in seen
    assert "1 hidden entity on this path" in seen
    everything = seen + (message.full_text or "") + json.dumps(message.blocks)
    assert "vault" not in everything and "secops" not in everything


def test_an_oversized_blast_radius_stays_within_every_limit_and_full_text_holds_it_all() -> None:
    snap = crowd(2000)
    message = format_blast_radius(blast_radius(snap, "resource:default/db"), judged(snap, limit=60))
    assert_within_limits(message)
    seen = shown(message)
    # A long list is one table: a header row, then one row per impacted entity that fits.
    (table,) = [b for b in message.blocks if b["type"] == "table"]
    listed = [row[0]["text"] for row in table["rows"][1:]]
    assert [cell["text"] for cell in table["rows"][0]] == ["entity", "impact", "hops", "owners", "via"]
    assert 3 <= len(listed) < 100 and all(re.match(r"service-\d{4}-", n) for n in listed), listed[:3]
    assert f"… and {2000 - len(listed)} more impacted entities" in seen
    assert "⚠ *stale graph*" in seen  # the warning survives the cut
    assert "graph 4 min old" in seen
    assert [cell["text"] for cell in table["rows"][1]][1:] == ["breaks", "1", "team-a", "db (declared)"]
    assert message.full_text is not None
    full = message.full_text
    assert all(f"service-{i:04d}-" in full for i in range(2000))
    assert "catalog/very/long/path/to/descriptor-1999.yaml#1" in full
    assert "⚠ stale graph: catalog last synced 4 min ago" in full


def test_a_small_answer_has_no_full_text() -> None:
    snap = crowd(3)
    message = format_blast_radius(blast_radius(snap, "resource:default/db"), judged(snap))
    assert message.full_text is None
    assert "more impacted" not in shown(message)


def test_cited_edges_name_a_few_sources_and_count_them_all() -> None:
    snap = snapshot(
        [entity(c("a")), entity(c("b"))],
        [dep(c("a"), c("b"), at=f"docs/runbook-{i}.md:3") for i in range(10)],
    )
    edge = snap.out_edges[c("a")][0]
    line = cited(edge)
    assert line == "a -depends_on-> b [docs/runbook-0.md:3, docs/runbook-1.md:3, docs/runbook-2.md:3, +7 more] x10"


def test_suspects_names_deploys_as_suspects_with_reason_owner_edge_and_link() -> None:
    snap = payments()
    message = format_suspects(suspects(snap, c("payments"), now=NOW), judged(snap))
    assert_within_limits(message)
    seen = shown(message)
    raw = "\n".join(texts(list(message.blocks)))
    link = "<https://ci.example.com/r-8812|r-8812> (ci.example.com)"
    line = f"🚩 *suspect* — direct dependency: {link} v2.3.1 (production) by alice"
    assert f"{line} at 2026-11-29 14:09 UTC, 55 min ago" in raw
    assert "*antifraud* · owners: risk" in seen
    assert "*redis* · owners: platform" in seen
    assert "`antifraud -depends_on-> redis [catalog/antifraud.yaml#1] x1`" in seen
    assert "*suspect* — the alerting service itself" in seen  # its own deploy
    assert "r-0001" not in seen  # outside the window
    assert "2 suspect deploys" in seen
    assert not re.search(r"\bcauses?\b", seen, re.IGNORECASE)
    assert message.text == "Suspects for payments: 2 deploys in the last 6h"


def test_suspects_share_button_carries_a_window_the_command_reads_back() -> None:
    snap = payments()
    result = suspects(snap, c("payments"), now=NOW, window=timedelta(minutes=90))
    [share] = buttons(format_suspects(result, judged(snap)))
    value = json.loads(share["value"])
    assert value == {"cmd": "suspects", "name": c("payments"), "since": "90m"}
    assert parse_window(value["since"]) == timedelta(minutes=90)


def test_deploy_fields_are_escaped_and_only_web_urls_become_links() -> None:
    snap = fresh(
        snapshot(
            [entity(c("api"))],
            [],
            [deploy("d-1", "api", NOW - timedelta(minutes=5), url="javascript:alert(1)", actor="<!channel>")],
        )
    )
    message = format_suspects(suspects(snap, c("api"), now=NOW), judged(snap))
    raw = "\n".join(texts(list(message.blocks)))
    assert "by &lt;!channel&gt;" in raw
    assert "<!channel>" not in raw
    assert "javascript" not in raw


def test_oversized_suspects_keep_every_dependency_with_a_deploy() -> None:
    count = 600
    refs = [c(f"dependency-{i:04d}-with-a-rather-long-name-so-that-the-list-overflows") for i in range(count)]
    snap = fresh(
        snapshot(
            [entity(c("alerting")), *(entity(r, owner="group:default/team") for r in refs)],
            [dep(c("alerting"), r) for r in refs],
            [deploy("late-1", refs[-1], NOW - timedelta(minutes=10))],
        )
    )
    message = format_suspects(suspects(snap, c("alerting"), now=NOW), judged(snap))
    assert_within_limits(message)
    seen = shown(message)
    assert "dependency-0599" in seen and "late-1" in seen
    assert "more dependencies (full list attached)" in seen
    assert message.full_text is not None
    assert all(f"dependency-{i:04d}" in message.full_text for i in range(count))


def test_an_ambiguous_name_offers_each_candidate_as_a_button_that_reruns_the_command() -> None:
    snap = snapshot([entity(c("redis")), entity("resource:default/redis")])
    resolution = resolve(snap.aliases, "redis")
    message = format_unresolved("redis", resolution, command="blast-radius", args={"depth": 2})
    assert_within_limits(message)
    assert message.text == "redis is ambiguous"
    picks = buttons(message)
    assert [b["action_id"] for b in picks] == ["pick_entity_0", "pick_entity_1"]
    assert [b["text"]["text"] for b in picks] == ["redis (component)", "redis (resource)"]
    values = [json.loads(b["value"]) for b in picks]
    assert values == [
        {"cmd": "blast-radius", "name": c("redis"), "depth": 2},
        {"cmd": "blast-radius", "name": "resource:default/redis", "depth": 2},
    ]


def test_an_unknown_name_suggests_close_names_as_buttons() -> None:
    snap = shop()
    message = format_unresolved("auth-servce", resolve(snap.aliases, "auth-servce"), command="suspects")
    assert message.text == "no entity named auth-servce"
    assert "No entity named *auth-servce* in the graph. Did you mean:" in shown(message)
    values = [json.loads(b["value"]) for b in buttons(message)]
    assert {"cmd": "suspects", "name": c("auth-service")} in values


def test_a_name_like_nothing_gets_no_buttons_but_a_hint() -> None:
    snap = shop()
    message = format_unresolved("zzqx", resolve(snap.aliases, "zzqx"), command="suspects")
    assert buttons(message) == []
    assert "try its full ref" in shown(message)


def test_a_mention_answer_has_a_headed_section_then_cited_lines_in_a_code_block() -> None:
    snap = shop()
    answer = ask(snap, "what breaks if auth-service goes down?", now=NOW)
    message = format_answer(answer, judged(snap))
    assert_within_limits(message)
    sections = [b["text"]["text"] for b in of_type(message, "section")]
    assert sections[0].startswith("*auth-service — what breaks if it fails*\nIf auth-service goes down, login-flow")
    assert sections[1].startswith("```\n") and sections[1].endswith("\n```")
    assert "login-flow -depends_on-&gt; auth-service [catalog/login-flow.yaml#1] x1" in sections[1]
    assert "graph 4 min old" in shown(message)
    assert message.full_text is None


def test_a_huge_mention_answer_is_cut_with_the_full_text_kept() -> None:
    snap = crowd(800)
    message = format_answer(ask(snap, "what breaks if db goes down?", now=NOW), judged(snap))
    assert_within_limits(message)
    assert message.full_text is not None
    assert "service-0799" in message.full_text
    assert "attached" in shown(message)


def test_graph_lag_lists_each_source_with_age_error_stale_flag_held_change_and_hygiene() -> None:
    marks = [
        SourceMark("catalog", last_success=NOW - timedelta(minutes=2)),
        SourceMark("deploys", last_success=NOW - timedelta(hours=2), last_error="connection refused"),
        SourceMark("docs", last_success=NOW - timedelta(minutes=1), held_reason="would drop 40% of entities"),
    ]
    report = judge(marks, NOW, StalePolicy(300))
    message = format_lag(report, hygiene={"dangling refs": 3, "kindless refs": 0}, now=NOW)
    assert_within_limits(message)
    seen = shown(message)
    assert "⚠ *graph is stale*: deploys (failing), docs (held)" in seen
    assert "✅ ok *catalog* — 2 min old (last applied 2026-11-29 15:02 UTC), threshold 15 min" in seen
    assert "❌ FAILING *deploys* — 2.0 h old (last applied 2026-11-29 13:04 UTC), threshold 15 min ⚠ past" in seen
    assert "last error: `connection refused`" in seen
    assert "⏸ HELD *docs* — 60 s old" in seen
    assert "change held for review: would drop 40% of entities" in seen
    assert "*Hygiene*: dangling refs 3 · kindless refs 0" in seen
    assert message.text == "graph is stale: deploys (failing), docs (held)"


def test_graph_lag_reports_sources_held_outside_the_report_and_never_synced_ones() -> None:
    report = judge([SourceMark("triples")], NOW, StalePolicy(300))
    message = format_lag(report, held={"catalog": "would retire 120 entities"})
    seen = shown(message)
    assert "⚠ STALE *triples* — never synced" in seen
    assert "⏸ HELD *catalog* — change held for review: would retire 120 entities" in seen
    assert message.text == "graph is stale: triples (stale), catalog (held)"


def test_lag_alerts_say_stale_with_the_error_and_recovered_with_the_time() -> None:
    stale_lag = judge([SourceMark("deploys", NOW - timedelta(minutes=47), "timeout")], NOW, StalePolicy(300))
    went_stale = format_lag_alert(LagTransition("deploys", True, NOW, stale_lag.sources[0]))
    assert_within_limits(went_stale)
    assert went_stale.text == "⚠ oncall-graph source deploys is stale (its last read failed)"
    assert "last applied change 47 min ago, threshold 15 min; last error: `timeout`" in shown(went_stale)
    ok_lag = judge([SourceMark("deploys", NOW)], NOW, StalePolicy(300))
    recovered = format_lag_alert(LagTransition("deploys", False, NOW, ok_lag.sources[0]))
    assert recovered.text == "✅ oncall-graph source deploys recovered"
    assert "recovered*: synced 2026-11-29 15:04 UTC" in shown(recovered)


def test_alert_reply_has_suspects_and_a_short_blast_radius_without_a_share_button() -> None:
    snap = fresh(
        snapshot(
            [entity(c("redis-proxy"), owner="group:default/platform"), *(entity(c(f"svc-{i}")) for i in range(8))],
            [dep(c(f"svc-{i}"), c("redis-proxy")) for i in range(8)],
            [deploy("r-1", "redis-proxy", NOW - timedelta(minutes=20))],
        )
    )
    found = suspects(snap, c("redis-proxy"), now=NOW)
    message = format_alert_reply(found, blast_radius(snap, c("redis-proxy")), judged(snap))
    assert_within_limits(message)
    seen = shown(message)
    assert "*suspect* — the alerting service itself: r-1" in seen
    assert "*If redis-proxy goes down*: 8 break" in seen
    assert len(re.findall(r"\*svc-\d\* breaks", seen)) == 5
    assert "… and 3 more (`/blast-radius component:default/redis-proxy`)" in seen
    assert buttons(message) == []


def test_alert_reply_on_a_huge_graph_stays_within_limits() -> None:
    snap = crowd(2000)
    db = "resource:default/db"
    message = format_alert_reply(suspects(snap, db, now=NOW), blast_radius(snap, db), judged(snap))
    assert_within_limits(message)
    assert "and 1995 more" in shown(message)


def test_a_refusal_is_one_short_escaped_section() -> None:
    message = format_refusal("Sorry — /graph-lag is for <admins> only. " + "x" * 5000)
    assert_within_limits(message)
    assert len(message.blocks) == 1
    assert message.blocks[0]["text"]["text"].startswith("Sorry — /graph-lag is for &lt;admins&gt; only.")


def test_formatting_is_pure_the_same_inputs_give_the_same_message() -> None:
    snap = payments()
    result = suspects(snap, c("payments"), now=NOW)
    assert format_suspects(result, judged(snap)) == format_suspects(result, judged(snap))
    assert NOW.tzinfo is UTC


def quoted(*texts: str, entity: str = "resource:default/db") -> tuple[CitedPassage, ...]:
    return tuple(
        CitedPassage(entity, Passage("docs", f"runbooks/db.md §Step {i}", f"Step {i}", text, i, "runbooks/db.md"))
        for i, text in enumerate(texts, 1)
    )


def test_blast_radius_quotes_runbook_passages_in_a_context_block_above_the_footer() -> None:
    snap = shop()
    passages = quoted("Promote the replica <now> & check.", entity=c("auth-service"))
    message = format_blast_radius(blast_radius(snap, c("auth-service")), judged(snap), passages=passages)
    [block] = [b for b in of_type(message, "context") if "Runbooks" in texts(b)[0]]
    assert message.blocks.index(block) == len(message.blocks) - 3  # then the footer and the share button
    text = texts(block)[0]
    assert "`runbooks/db.md §Step 1` (auth-service) Promote the replica &lt;now&gt; &amp; check." in text
    assert_within_limits(message)
    assert "Runbooks" not in shown(format_blast_radius(blast_radius(snap, c("auth-service")), judged(snap)))


def test_huge_passages_leave_an_oversized_answer_within_every_limit() -> None:
    snap = crowd(2000)
    db = "resource:default/db"
    passages = quoted(*("word " * 300 for _ in range(3)))
    blast = format_blast_radius(blast_radius(snap, db), judged(snap), passages=passages)
    found = suspects(snap, db, now=NOW)
    reply = format_alert_reply(found, blast_radius(snap, db), judged(snap), passages=passages)
    for message in (blast, reply, format_suspects(found, judged(snap), passages=passages)):
        assert_within_limits(message)
        assert "runbooks/db.md §Step 3" in shown(message)
    assert blast.full_text is not None and "Runbooks: runbooks/db.md §Step 1 (db)" in blast.full_text

"""Where a PagerDuty incident is posted, how its service resolves, and how the post is headed."""

from __future__ import annotations

import pytest

from bot.pagerduty.channel import Route, choose_channel, parse_channel_map
from bot.pagerduty.incident_post import format_incident_post
from bot.pagerduty.incident_reply import resolve_service
from bot.pagerduty.payload import Incident
from bot.slack.blocks.kit import MAX_BLOCKS, SlackMessage, header, section
from bot.slack.blocks.messages import format_unresolved
from graph.exposure.visibility import EVERYONE, Viewer
from graph.snapshot import Snapshot
from tests.graph.builders import dep, entity, snapshot

PAYMENTS = "component:default/payments"
LEDGER = "component:default/ledger"
VAULT = "component:default/vault-proxy"


def shop() -> Snapshot:
    return snapshot(
        [
            entity(PAYMENTS, annotations={"pagerduty.com/service-id": "PAYMNTS", "slack.com/channel": "CPAYTEAM"}),
            entity(LEDGER, annotations={"pagerduty.com/service-id": "PLEDGR2"}),
            entity(
                VAULT,
                annotations={
                    "oncall-graph/visibility": "restricted",
                    "oncall-graph/allowed-channels": "CSEC",
                    "slack.com/channel": "CSEC",
                },
            ),
        ],  # fmt: skip
        [dep(PAYMENTS, LEDGER)],
    )


def incident(
    service_id: str = "PAYMNTS",
    service_name: str = "Payments API",
    *,
    title: str = "Error rate > 5%",
    html_url: str = "https://acme.pagerduty.com/incidents/Q1",
) -> Incident:
    return Incident("Q1", title, "high", html_url, service_id=service_id, service_name=service_name)


def test_the_channel_setting_is_parsed_and_a_bad_pair_names_the_setting() -> None:
    assert parse_channel_map(" PAYMNTS=C1 , component:default/ledger=C2,,") == {
        "PAYMNTS": "C1",
        "component:default/ledger": "C2",
    }
    assert parse_channel_map("") == {}
    for bad in ("PAYMNTS", "=C1", "PAYMNTS=", "A=C1,B"):
        with pytest.raises(ValueError, match="ONCALL_GRAPH_PAGERDUTY_CHANNELS"):
            parse_channel_map(bad)


def test_the_setting_wins_by_service_id_then_by_any_name_of_the_entity() -> None:
    snap = shop()
    by_id = choose_channel(snap, {"paymnts": "CMAP"}, service_id="PAYMNTS", entity=PAYMENTS, fallback="CALL")
    assert by_id == Route("CMAP", "setting")
    by_name = choose_channel(snap, {"Payments": "CNAME"}, service_id="PAYMNTS", entity=PAYMENTS, fallback="CALL")
    assert by_name == Route("CNAME", "setting")
    unknown_service = choose_channel(snap, {"PNOPE01": "CX"}, service_id="PNOPE01", entity=None, fallback="CALL")
    assert unknown_service == Route("CX", "setting")


def test_without_a_setting_the_annotation_then_the_alert_channel() -> None:
    snap = shop()
    fallback = Route("CALL", "alert channel")
    assert choose_channel(snap, {"ledger": "CL"}, service_id="PAYMNTS", entity=PAYMENTS, fallback="CALL") == Route(
        "CPAYTEAM", "annotation"
    )
    assert choose_channel(snap, {}, service_id="PLEDGR2", entity=LEDGER, fallback="CALL") == fallback
    assert choose_channel(snap, {}, service_id="PNOPE01", entity=None, fallback="CALL") == fallback
    assert choose_channel(snap, {}, service_id="PLEDGR2", entity=LEDGER, fallback="") is None


def test_a_service_resolves_by_pagerduty_id_before_its_name() -> None:
    snap = shop()
    # The name says ledger, the id says payments: the id is the catalog's own link, so it wins.
    assert resolve_service(snap, incident("PAYMNTS", "ledger"), EVERYONE).entity == PAYMENTS
    assert resolve_service(snap, incident("PUNKNOWN", "ledger"), EVERYONE).entity == LEDGER
    unknown = resolve_service(snap, incident("PUNKNOWN", "paymants"), EVERYONE)
    assert unknown.entity is None and PAYMENTS in unknown.suggestions


def test_a_restricted_service_resolves_only_for_its_allowed_channel() -> None:
    snap = shop()
    assert resolve_service(snap, incident("", "vault-proxy"), Viewer(channel="CSEC")).entity == VAULT
    assert resolve_service(snap, incident("", "vault-proxy"), Viewer(channel="COPS")).entity is None


def test_the_post_names_the_incident_under_the_answers_header() -> None:
    answer = SlackMessage("Suspects for payments: 1 deploy", (header("Alert on payments"), section("body")))
    post = format_incident_post(incident(title="Paiements <en panne> & lents ⚠"), answer)
    assert post.blocks[0] == answer.blocks[0] and post.blocks[2:] == answer.blocks[1:]
    line = post.blocks[1]["text"]["text"]
    assert "<https://acme.pagerduty.com/incidents/Q1|Paiements &lt;en panne&gt; &amp; lents ⚠>" in line
    assert "high urgency" in line and "Payments API (PAYMNTS)" in line
    assert post.text.startswith("PagerDuty incident: Paiements &lt;en panne&gt; &amp; lents ⚠ · Suspects for payments")


def test_an_unresolved_post_leads_with_the_incident_and_stays_within_limits() -> None:
    snap = shop()
    resolution = resolve_service(snap, incident("PUNKNOWN", "paymants"), EVERYONE)
    unresolved = format_unresolved("paymants", resolution, command="suspects")
    post = format_incident_post(incident(title="x" * 5000, html_url="javascript:alert(1)"), unresolved)
    line = post.blocks[0]["text"]["text"]
    assert "PagerDuty incident" in line and "javascript" not in line and len(line) < 500
    assert post.blocks[1:] == unresolved.blocks and len(post.blocks) <= MAX_BLOCKS
    assert len(post.text) <= 300
    long_url = format_incident_post(incident(html_url="https://acme.pagerduty.com/" + "x" * 4000), unresolved)
    assert "<https://" not in long_url.blocks[0]["text"]["text"] and "Error rate" in long_url.blocks[0]["text"]["text"]

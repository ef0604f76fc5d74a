"""The pure parts of the newer Slack surfaces: which links are entity pages, the assistant's prompts,
what a person's teams own, and the one-line glance, escaped, as Block Kit reads it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from slack_sdk.models.blocks import Block

from bot.query.glance import glance
from bot.slack.blocks.glance import format_unfurl, glance_line
from bot.slack.prompts import MAX_PROMPTS, RECENT_DEPLOYS, alert_prompts, graph_prompts
from bot.slack.unfurls import entity_ref
from graph.exposure.visibility import ALLOWED_CHANNELS, VISIBILITY, Viewer
from graph.ownership import SLACK_ID, catalog_users, owned_by, teams_of
from graph.snapshot import Snapshot
from tests.graph.builders import BUILT_AT, dep, deploy, entity, snapshot

BASE = "https://backstage.example.com"
REDIS, API, WEB, VAULT = (
    "resource:default/redis",
    "component:default/api",
    "component:default/web",
    "component:default/vault",
)
HIDDEN = {VISIBILITY: "restricted", ALLOWED_CHANNELS: "CSEC"}


def graph() -> Snapshot:
    people = [
        entity("user:default/dana", annotations={SLACK_ID: "UDANA"}),
        entity("user:default/eve", annotations={SLACK_ID: " UEVE "}),
        entity("group:default/sre"),
        entity("group:default/sec"),
    ]
    things = [
        entity(REDIS, owner="group:default/sre"),
        entity(API, owner="group:default/sre"),
        entity(WEB, owner="user:default/dana"),
        entity(VAULT, owner="group:default/sec", annotations=HIDDEN),
    ]
    facts = [dep(API, REDIS), dep(WEB, API), dep(VAULT, REDIS),
             dep("user:default/dana", "group:default/sre", rel="member_of"),
             dep("user:default/eve", "group:default/sec", rel="member_of")]  # fmt: skip
    facts += [dep(r, e.owner, rel="owned_by") for e in things for r in [e.ref]]
    return snapshot([*people, *things], facts, [deploy("r-1", "redis", "2026-11-29T14:00:00Z")])


@pytest.mark.parametrize(
    ("url", "ref"),
    [
        (f"{BASE}/catalog/default/component/payments", "component:default/payments"),
        (f"{BASE}/catalog/Default/Component/Payments/dependencies?x=1", "component:default/payments"),
        (f"{BASE}/catalog/ops/resource/redis%2Dmain/", "resource:ops/redis-main"),
        ("HTTPS://BACKSTAGE.example.com/catalog/default/api/pay", "api:default/pay"),
        (f"{BASE}/catalog/default/component", None),
        (f"{BASE}/catalog//component/x", None),
        (f"{BASE}/docs/default/component/payments", None),
        ("http://backstage.example.com/catalog/default/component/payments", None),  # another scheme
        ("https://backstage.example.com.evil.io/catalog/default/component/payments", None),
        ("https://evil.io/?https://backstage.example.com/catalog/default/component/payments", None),
        ("javascript:alert(1)", None),
        ("https://[::1/catalog/default/component/x", None),
    ],
)
def test_only_entity_pages_under_the_backstage_url_name_an_entity(url: str, ref: str | None) -> None:
    assert entity_ref(url, BASE) == ref


def test_a_backstage_url_with_a_path_and_none_at_all() -> None:
    assert (
        entity_ref(
            "https://tools.example.com/backstage/catalog/default/component/x", "https://tools.example.com/backstage"
        )
        == "component:default/x"
    )
    assert (
        entity_ref("https://tools.example.com/catalog/default/component/x", "https://tools.example.com/backstage")
        is None
    )
    assert entity_ref(f"{BASE}/catalog/default/component/x", "") is None


def test_people_are_found_by_their_slack_id_and_own_what_their_groups_and_they_own() -> None:
    built = graph()
    assert catalog_users(built, "UDANA") == ("user:default/dana",)
    assert catalog_users(built, "UEVE") == ("user:default/eve",)  # the annotation's spaces are no part of it
    assert catalog_users(built, "") == catalog_users(built, "UNOBODY") == ()
    assert teams_of(built, "UDANA") == ("user:default/dana", "group:default/sre")
    assert owned_by(built, teams_of(built, "UDANA")) == (API, WEB, REDIS)


def test_prompts_name_the_alerted_service_or_the_most_depended_on_the_person_may_see() -> None:
    built = graph()
    assert [p.message for p in alert_prompts("redis")][:2] == [
        "What breaks if redis goes down?",
        "What changed around redis in the last 6 h?",
    ]
    outsider = graph_prompts(built, Viewer(user="UX"))
    assert [p.message for p in outsider] == ["What breaks if redis goes down?", "What breaks if api goes down?",
                                             RECENT_DEPLOYS]  # fmt: skip
    assert len(outsider) <= MAX_PROMPTS and all(len(p.title) <= 75 for p in outsider)
    long = alert_prompts("x" * 200)[0]
    assert len(long.title) == 75 and long.message.startswith("What breaks if xxx")
    odd = alert_prompts("<!channel> a\u202eb")[0]  # a name from a source: never a ping, never reordered
    assert odd.message == "What breaks if \u2039!channel\u203a a\ufffdb goes down?" and "<" not in odd.title


def test_a_glance_leaves_out_what_the_viewer_may_not_see_and_escapes_what_it_shows() -> None:
    built = graph()
    assert glance(built, VAULT, Viewer(channel="COPS")) is None
    assert glance(built, "component:default/nothing", Viewer()) is None
    outsider = glance(built, REDIS, Viewer(channel="COPS"))
    assert outsider is not None and VAULT not in outsider.nearest
    assert (outsider.breaks, outsider.nearest[0]) == (3, API)  # vault counted, never named
    line = glance_line(outsider, BUILT_AT + timedelta(hours=2))
    assert line.startswith("*redis* (resource) · if it goes down: 3 break, 0 degrade (api, web, …)")
    assert "owners: sre" in line and "last deploy: r-1 v1, 3.0 h ago" in line and "vault" not in line
    insider = glance(built, REDIS, Viewer(channel="CSEC"))
    assert insider is not None and VAULT in insider.nearest
    for block in format_unfurl(outsider, BUILT_AT)["blocks"]:  # type: ignore[union-attr]
        parsed = Block.parse(block)
        assert parsed is not None
        parsed.validate_json()


def test_a_glance_line_escapes_source_text() -> None:
    odd = snapshot([entity("component:default/a<b>&c", owner="group:default/x")],
                   [dep("component:default/a<b>&c", "group:default/x", rel="owned_by")])  # fmt: skip
    found = glance(odd, "component:default/a<b>&c", Viewer())
    assert found is not None
    line = glance_line(found, BUILT_AT)
    assert "*a&lt;b&gt;&amp;c*" in line and "nothing in the graph depends on it" in line and "no deploy known" in line

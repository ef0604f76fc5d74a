"""Live data in Slack's Block Kit: entries failing now first and marked, the count in the header, one
line citing the live part (or saying it is missing), incidents linked; all escaped, all within limits."""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.slack.blocks.messages import format_alert_reply, format_blast_radius, format_suspects
from graph.traffic.live import Incident, LiveCall, Present, live_suspects, present
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects
from tests.bot.slack.test_blocks import assert_within_limits, fresh, judged, shown
from tests.bot.slack.test_escaping import CONTROL, check, hostile
from tests.graph.test_live import AT, CHECKOUT, DB, SECRET_ROOM, live_shop, names, reading

CITED = "live: prometheus:9090 at 03:12:05 UTC (last 5 min) · open incidents: api.pagerduty.com"


def test_a_blast_radius_lists_what_is_failing_now_first_marked_and_counted() -> None:
    snap = fresh(live_shop())
    message = format_blast_radius(blast_radius(snap, DB), judged(snap), live=names(snap))
    assert_within_limits(message)
    seen = shown(message)
    assert "If orders-db goes down: 4 break · 0 degrade · 0 systems impacted · 2 already failing" in seen
    assert seen.index("*Now: failing, or with an open incident*") < seen.index("*fraud-check*")
    assert seen.index("*checkout*") < seen.index("*1 hop*") < seen.index("*cart*")
    assert "🔴 *now*: fraud-check: 50% of calls to cart failing (last 5 min)" in seen
    assert "🔴 *now*: checkout: 12% of calls to cart failing (last 5 min)" in seen
    assert "⚪ cart: calls to orders-db not failing yet (last 5 min)" in seen
    assert "🚨 open incident <https://acme.pagerduty.com/incidents/Q9|#9> (acme.pagerduty.com)" in seen
    assert seen.count(CITED) == 1 and message.blocks[-3]["type"] == "context"


def test_a_channel_that_may_not_see_an_entity_is_not_told_it_is_failing() -> None:
    snap = fresh(live_shop())
    looked = names(snap).for_viewer(snap, SECRET_ROOM)
    message = format_blast_radius(blast_radius(snap, DB, viewer=SECRET_ROOM), judged(snap), live=looked)
    seen = shown(message)
    assert "fraud" not in seen.casefold() and "· 1 already failing" in seen
    assert "#9> (acme.pagerduty.com) (hidden: it names an entity not shown here)" in seen


def test_the_alert_reply_marks_failing_dependencies_and_dependents_and_cites_the_live_part_once() -> None:
    snap = fresh(live_shop())
    now = names(snap)
    found = live_suspects(suspects(snap, CHECKOUT, now=AT), now)
    message = format_alert_reply(found, blast_radius(snap, CHECKOUT), judged(snap), live=now)
    assert_within_limits(message)
    seen = shown(message)
    head = seen.index("*Now: failing, or with an open incident*")
    assert head < seen.index("*cart* · owners") < seen.index("*payments* · owners") < seen.index("*orders-db* · owners")
    assert "🔴 *now*: checkout: 5% of calls to payments failing (last 5 min)" in seen
    assert "🚨 open incident <https://acme.pagerduty.com/incidents/Q11|#11>" in seen
    # The short blast radius below: frontend, its one dependent, calls it without errors.
    assert "*If checkout goes down*: 1 break · 0 degrade · 0 systems impacted" in seen
    assert "⚪ frontend: calls to checkout not failing yet (last 5 min)" in seen
    assert seen.count(CITED) == 1


def test_live_data_that_did_not_come_is_one_line_and_no_mark() -> None:
    snap = fresh(live_shop())
    late = present(snap, reading(error="no answer within 1 s"))
    message = format_suspects(suspects(snap, CHECKOUT, now=AT), judged(snap), live=late)
    seen = shown(message)
    assert "⚠ live data missing: prometheus:9090: no answer within 1 s" in seen
    assert "🔴" not in seen and "⚪" not in seen and "Now:" not in seen and seen.count("live data missing") == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile, hostile | st.sampled_from(CONTROL), hostile)
def test_incident_titles_links_and_statuses_reach_slack_escaped(title: str, url: str, status: str) -> None:
    snap = fresh(live_shop())
    opened = (Incident(4521, title, url, status or "triggered", "PCHECKOUT"),)
    now = present(snap, reading(LiveCall("checkout", "cart", 10, 5)), opened, incidents_from="api.pagerduty.com")
    urls = {url}
    check(format_blast_radius(blast_radius(snap, DB), judged(snap), live=now), urls)
    check(
        format_suspects(
            live_suspects(suspects(snap, "component:default/frontend", now=AT), now), judged(snap), live=now
        ),
        urls,
    )
    said = replace(now, incidents_error=title)  # an API's error message is source text too
    assert isinstance(said, Present)
    check(format_blast_radius(blast_radius(snap, DB), judged(snap), live=said), urls)


def test_an_incident_link_is_built_only_from_an_http_url() -> None:
    snap = fresh(live_shop())
    opened = (Incident(66, "cart down", "javascript:alert(1)", "triggered", "PCHECKOUT"),)
    now = present(snap, reading(), opened, incidents_from="api.pagerduty.com")
    seen = shown(format_blast_radius(blast_radius(snap, DB), judged(snap), live=now))
    assert "🚨 open incident #66 cart down (triggered)" in seen and not re.search(r"<javascript", seen)

"""Predicted and present over real HTTP: `oncall-graph serve` syncing the live shop from a real
Prometheus (its series ending this minute), reading open incidents from a PagerDuty REST API on a
real socket; an alert in a watched channel and a PagerDuty webhook are answered with the failing
dependents marked, first, counted and cited, in Block Kit slack_sdk accepts, nothing hidden named."""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from tests.e2e.conftest import ALERTS, Bot, write_sources
from tests.e2e.test_alert_redaction import alert_card
from tests.e2e.test_pagerduty_webhook import PD_SECRET, incident_event, raw
from tests.e2e.test_slack_bot import text_of
from tests.fakes.pagerduty_api import TOKEN, PagerDutyApi, incident, pagerduty_api
from tests.fakes.prometheus_server import PrometheusServer, prometheus
from tests.fakes.slack_api import FakeSlack
from tests.fakes.troubled_api import closed_url
from tests.live_shop import CATALOG
from tests.service_graph_series import LIVE, LIVE_SERIES

Json = dict[str, Any]


@pytest.fixture(scope="module")
def fresh_prometheus() -> Iterator[PrometheusServer]:
    """The live series ending this minute: the bot asks at its own clock, not at a pinned `--now`."""
    end = datetime.fromtimestamp(int(datetime.now(UTC).timestamp()) // 60 * 60, UTC)
    with prometheus(LIVE_SERIES, end) as server:
        yield server


@pytest.fixture
def incidents() -> Iterator[PagerDutyApi]:
    account = {
        "services": [], "business_services": [], "relationships": [],
        "incidents": [incident(4521, "checkout <!here> can't reach cart", "PCHECKOUT"),
                      incident(4400, "fraud-check queue full", "PFRAUD")],
    }  # fmt: skip
    with pagerduty_api(account) as api:
        yield api


def validated(message: Json) -> str:
    """What a person reads in the message, once every block passed slack_sdk's own models."""
    for block in message.get("blocks") or []:
        parsed = Block.parse(block)
        assert parsed is not None, block
        parsed.validate_json()
    return html.unescape(text_of(message))


def test_the_alert_thread_reply_and_the_webhook_post_mark_the_failing_dependents(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, fresh_prometheus: PrometheusServer,
    incidents: PagerDutyApi,
) -> None:  # fmt: skip
    sources = {"ONCALL_GRAPH_CATALOG": CATALOG, "ONCALL_GRAPH_SERVICE_GRAPH": fresh_prometheus.url}
    bot = bot_factory(
        sources=sources, ONCALL_GRAPH_SERVICE_GRAPH_PREFIX=LIVE, PAGERDUTY_API_TOKEN=TOKEN,
        ONCALL_GRAPH_PAGERDUTY_API_URL=incidents.url, PAGERDUTY_WEBHOOK_SECRETS=PD_SECRET,
        ONCALL_GRAPH_ALERT_CHANNEL="COPSALERTS",
    )  # fmt: skip
    bot.event(alert_card("1700000200.000100", "cart: 5xx above 5%", "cart"), event_id="EvLive1")
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=30)
    [reply] = fake_slack.posted("chat.postMessage")
    assert reply["channel"] == ALERTS and reply["thread_ts"] == "1700000200.000100"
    seen = validated(reply)
    host = fresh_prometheus.url.removeprefix("http://")
    # fraud-check, restricted to #security, is counted hidden as ever, never as failing.
    assert "If cart goes down*: 3 break · 0 degrade · 1 system impacted · 1 hidden here · 1 already failing" in seen
    assert "🔴 *now*: checkout: 12% of calls to cart failing (last 5 min)" in seen
    assert "⚪ frontend: calls to checkout not failing yet (last 5 min)" in seen
    assert seen.index("12% of calls to cart failing") < seen.index("*frontend*")
    assert "#4521> (acme.pagerduty.com) checkout <!here> can't reach cart (triggered)" in seen
    assert seen.count(f"live: {host} at ") == 1 and "open incidents: " + incidents.url.removeprefix("http://") in seen
    assert "<!here>" not in str(reply["blocks"]) and "&lt;!here&gt;" in str(reply["blocks"])  # escaped
    assert "fraud" not in seen.casefold()  # restricted to #security: neither its failing calls nor its incident

    body = raw(incident_event("Q9LIVE1", "PCART", "cart", title="cart 5xx"))
    assert bot.pagerduty(body, PD_SECRET).status_code == 202
    fake_slack.wait_for(lambda: len(fake_slack.posted("chat.postMessage")) >= 2, timeout=30)
    [post] = [p for p in fake_slack.posted("chat.postMessage") if p["channel"] == "COPSALERTS"]
    posted = validated(post)
    assert (
        "🔴 *now*: checkout: 12% of calls to cart failing (last 5 min)" in posted and "fraud" not in posted.casefold()
    )
    assert [r.path for r in incidents.requests].count("/incidents") == 1  # one read served both answers
    assert "Traceback" not in bot.output()


def test_a_live_source_that_is_down_costs_the_thread_reply_one_line(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    sources = write_sources(tmp_path / "acme") | {"ONCALL_GRAPH_SERVICE_GRAPH": closed_url()}
    bot = bot_factory(sources=sources, ONCALL_GRAPH_HTTP_TIMEOUT="1")
    bot.event(alert_card("1700000300.000100", "Payments: error rate above 5%", "Payments"), event_id="EvLive2")
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=30)
    [reply] = fake_slack.posted("chat.postMessage")
    seen = validated(reply)
    assert "antifraud" in seen  # the graph's answer, whole
    [missing] = [line for line in seen.splitlines() if "live data missing" in line]
    assert missing.startswith("⚠ live data missing: 127.0.0.1:") and "ConnectError" in missing
    assert "🔴" not in seen and "⚪" not in seen

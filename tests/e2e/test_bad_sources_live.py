"""Bad sources committed while `oncall-graph serve` runs (a real subprocess on a copy of
examples/acme, the local fake Slack, signed requests over HTTP): a 1 KB YAML bomb, the file
holding `redis` turned into invalid YAML, then fixed, and a deploy feed that drips a byte a second."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from tests.e2e.conftest import ADMIN, Bot
from tests.e2e.test_slack_bot import only_response, text_of
from tests.fakes.dripping_feed import dripping_feed
from tests.fakes.slack_api import FakeSlack
from tests.sync.sources.test_yaml_alias_bound import bomb

ACME = Path(__file__).resolve().parents[2] / "examples" / "acme" / "catalog"
ALERT_CHANNEL = "COPSALERTS"
SLACK_ACK_SECONDS = 3.0  # Slack's contract: a slash command not acked within 3 s fails for the user
RSS_BOUND_KB = 400 * 1024


def rss_kb(bot: Bot) -> int:
    for line in Path(f"/proc/{bot.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS line")


def start(bot_factory: Callable[..., Bot], tmp_path: Path, **settings: str) -> tuple[Bot, Path]:
    catalog = tmp_path / "catalog"
    shutil.copytree(ACME, catalog)
    bot = bot_factory(
        sources={"ONCALL_GRAPH_CATALOG": str(catalog)}, ONCALL_GRAPH_SYNC_INTERVAL="1",
        ONCALL_GRAPH_ALERT_CHANNEL=ALERT_CHANNEL, **settings,
    )  # fmt: skip
    return bot, catalog


def acked_command(bot: Bot, fake_slack: FakeSlack, command: str, text: str, name: str) -> str:
    """Send a signed slash command, assert it was acked inside Slack's 3 s, return the answer's text."""
    started = time.monotonic()
    response = bot.command(command, text, fake_slack.response_url(name), user=ADMIN)
    took = time.monotonic() - started
    assert response.status_code == 200, response.text
    assert took < SLACK_ACK_SECONDS, f"{command} acked after {took:.2f} s"
    return text_of(only_response(fake_slack, name))


def lag_until(bot: Bot, fake_slack: FakeSlack, wanted: Callable[[str], bool], tag: str) -> str:
    deadline = time.monotonic() + 30
    attempt = 0
    while True:
        attempt += 1
        lag = acked_command(bot, fake_slack, "/graph-lag", "", f"{tag}-{attempt}")
        if wanted(lag) or time.monotonic() > deadline:
            return lag
        time.sleep(0.5)


def test_a_yaml_bomb_committed_while_serving_leaves_acks_prompt_memory_bounded_and_lag_naming_it(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot, catalog = start(bot_factory, tmp_path)
    assert "redis" in acked_command(bot, fake_slack, "/blast-radius", "redis", "before")
    (catalog / "bomb.yaml").write_text(bomb())
    highest = rss_kb(bot)
    for attempt in range(8):  # several sync ticks while the bomb sits in the catalog
        answer = acked_command(bot, fake_slack, "/blast-radius", "redis", f"during-{attempt}")
        assert "names no entity" not in answer
        highest = max(highest, rss_kb(bot))
        time.sleep(0.5)
    assert highest < RSS_BOUND_KB, f"RSS reached {highest} kB"
    lag = lag_until(bot, fake_slack, lambda text: "bomb.yaml" in text, "lag")
    assert "catalog/bomb.yaml" in lag
    assert bot.proc.poll() is None


def test_the_file_holding_redis_turned_invalid_keeps_redis_fails_the_source_and_alerts_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot, catalog = start(bot_factory, tmp_path)
    name = f"catalog:{catalog}"
    alerts = lambda: [m for m in fake_slack.posted("chat.postMessage") if m["channel"] == ALERT_CHANNEL]  # noqa: E731
    lag_until(bot, fake_slack, lambda text: "all sources fresh" in text, "fresh")
    good = (catalog / "edge.yaml").read_text()
    (catalog / "edge.yaml").write_text("apiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata: {name: redis\n")
    fake_slack.wait_for(alerts, timeout=30)
    time.sleep(3)  # several more sync ticks, the file still broken: no second alert
    [alert] = alerts()
    assert f"source {name} is stale (its last read failed)" in text_of(alert)
    assert "catalog/edge.yaml" in text_of(alert)
    answer = acked_command(bot, fake_slack, "/blast-radius", "redis", "broken")
    assert "names no entity" not in answer and "redis" in answer
    lag = lag_until(bot, fake_slack, lambda text: "FAILING" in text, "failing")
    assert f"❌ FAILING *{name}*" in lag and "catalog/edge.yaml" in lag

    (catalog / "edge.yaml").write_text(good)
    fake_slack.wait_for(lambda: len(alerts()) == 2, timeout=30)
    time.sleep(2)
    assert [text_of(m).split("\n")[0] for m in alerts()] == [
        f"⚠ oncall-graph source {name} is stale (its last read failed)",
        f"✅ oncall-graph source {name} recovered",
    ]
    assert "all sources fresh" in lag_until(bot, fake_slack, lambda text: "all sources fresh" in text, "after")


NEW_CONSUMER = """apiVersion: backstage.io/v1alpha1
kind: Component
metadata: {name: coupon-service}
spec: {type: service, lifecycle: production, owner: sre, dependsOn: ["resource:redis"]}
"""


def test_a_feed_dripping_a_byte_a_second_while_serving_leaves_acks_answers_and_catalog_syncs_and_fails_at_its_deadline(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    with dripping_feed(1.0) as feed:
        bot, catalog = start(bot_factory, tmp_path, ONCALL_GRAPH_DEPLOYS=feed, ONCALL_GRAPH_SOURCE_DEADLINE="3")
        name = f"deploys:{feed}"
        for attempt in range(4):  # while the feed's first read drips
            answer = acked_command(bot, fake_slack, "/blast-radius", "redis", f"during-{attempt}")
            assert "names no entity" not in answer and "redis" in answer
            time.sleep(0.5)
        (catalog / "coupons.yaml").write_text(NEW_CONSUMER)  # a catalog change lands while the feed drips
        deadline, attempt, answer = time.monotonic() + 30, 0, ""
        while "coupon-service" not in answer and time.monotonic() < deadline:
            attempt += 1
            answer = acked_command(bot, fake_slack, "/blast-radius", "redis", f"edited-{attempt}")
            time.sleep(0.5)
        assert "coupon-service" in answer
        lag = lag_until(bot, fake_slack, lambda text: "FAILING" in text and "deadline" in text, "lag")
        failing = [line for line in lag.splitlines() if "FAILING" in line]
        assert failing and all(name in line for line in failing), lag  # only the feed fails
        assert f"GET {feed}: body not received within the read deadline of 3 s" in lag
        assert f"✅ ok *catalog:{catalog}*" in lag  # the catalog's own syncs went on
        assert bot.proc.poll() is None and "Traceback" not in bot.output()


REFUSED_NAME = """apiVersion: backstage.io/v1alpha1
kind: Component
metadata: {name: Bad_}
spec: {type: service, lifecycle: production, owner: sre}
"""


def test_links_and_names_added_while_serving_reach_graph_lag_and_the_log_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot, catalog = start(bot_factory, tmp_path)
    name = f"catalog:{catalog}"
    lag_until(bot, fake_slack, lambda text: "all sources fresh" in text, "fresh")
    (catalog / "sub").mkdir()
    (catalog / "sub" / "loop").symlink_to("..")
    (catalog / "env.yaml").symlink_to("/proc/self/environ")
    (catalog / "portal.yaml").write_text(REFUSED_NAME)

    lag = lag_until(bot, fake_slack, lambda text: "catalog/env.yaml" in text and "portal.yaml" in text, "said")

    assert "catalog/sub/loop" in lag and "symlink to /proc/self/environ, outside the source folder" in lag
    assert "catalog/portal.yaml document 1, field metadata.name" in lag
    ticks = lambda: bot.output().count(f"source {name} unchanged")  # noqa: E731
    seen = ticks()
    deadline = time.monotonic() + 30
    while ticks() < seen + 3 and time.monotonic() < deadline:  # three more ticks, nothing new
        time.sleep(0.2)
    log = bot.output()
    assert ticks() >= seen + 3, log
    assert log.count("catalog/env.yaml: symlink to /proc/self/environ, outside the source folder") == 1, log
    assert log.count("catalog/sub/loop: symlink loop") == 1, log
    assert log.count("catalog/portal.yaml#1: metadata.name: name 'Bad_' breaks Backstage's rule") == 1, log

"""Every answer arrives, once: the fake Slack fails the bot's first post in each way Slack or a network
can, over real HTTP to the running bot with signed requests. The answer still arrives exactly once; a
Retry-After is honoured (measured by the fake's own clock between the two attempts); retries stop at
their bound with an error logged and the claim marked failed, and Slack's retry of that event is then
answered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from sync.store.database import make_engine
from sync.store.deliveries import DELIVERED, FAILED, DeliveryClaims
from sync.store.fact_store import Store
from tests.e2e.conftest import Bot, write_sources
from tests.e2e.test_slack_bot import mention, text_of
from tests.fakes.slack_api import FakeSlack

POST = "chat.postMessage"
ATTEMPTS = 4  # bot/slack/retrying.RetryPolicy: in all, the first included
RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}


def claim_state(database_url: str, key: str) -> str | None:
    engine = make_engine(database_url)
    try:
        return DeliveryClaims(Store(engine)).state(key)
    finally:
        engine.dispose()


def settled(database_url: str, key: str, state: str) -> None:
    """Wait for the bot to settle `key` (it does so just after its last post attempt)."""
    deadline = time.monotonic() + 10
    while claim_state(database_url, key) != state and time.monotonic() < deadline:
        time.sleep(0.05)
    assert claim_state(database_url, key) == state


def replies(fake: FakeSlack, thread: str) -> list[dict[str, Any]]:
    return [p for p in fake.posted(POST) if p.get("thread_ts") == thread]


def metric(bot: Bot, name: str) -> str:
    return "\n".join(line for line in httpx.get(f"{bot.url}/metrics", timeout=5).text.splitlines() if name in line)


@pytest.mark.parametrize(
    "failure",
    [
        {"status": 200, "error": "internal_error"},  # ok: false with a retryable error
        {"status": 200, "error": "service_unavailable"},
        {"status": 503, "retry_after": None},
        {"reset": True},  # the connection reset before any answer
    ],
    ids=["ok-false-internal-error", "ok-false-service-unavailable", "http-503", "connection-reset"],
)
def test_a_mention_whose_first_post_fails_is_answered_exactly_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path, failure: dict[str, Any]
) -> None:
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    bot = bot_factory(database_url=url)
    fake_slack.fail_next(POST, **failure)
    thread = "1700000000.000100"
    assert bot.event(mention(thread), event_id="EvOnce").status_code == 200
    fake_slack.wait_for(lambda: replies(fake_slack, thread), timeout=20)
    settled(url, "event:EvOnce", DELIVERED)
    bot.event(mention(thread), event_id="EvOnce", **RETRY)  # Slack retries anyway: already delivered
    time.sleep(1.5)  # give any duplicate the time to arrive: none may
    [reply] = replies(fake_slack, thread)
    assert "auth-service" in text_of(reply)
    assert len(fake_slack.attempts(POST)) == 2
    assert "oncall_graph_slack_post_retries_total{" in metric(bot, "post_retries_total")


def test_a_429_is_retried_after_its_retry_after(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot = bot_factory()
    fake_slack.fail_next(POST, status=429, retry_after=2)
    thread = "1700000000.000200"
    bot.event(mention(thread), event_id="Ev429")
    fake_slack.wait_for(lambda: replies(fake_slack, thread), timeout=20)
    first, second = fake_slack.attempts(POST)
    assert not first.accepted and second.accepted
    assert second.at - first.at >= 2.0  # the fake's own timestamps of the two attempts
    assert len(replies(fake_slack, thread)) == 1


def test_a_slash_command_whose_response_url_fails_once_is_answered_once_and_a_replay_not_again(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    fake_slack.fail_next("response/once", status=500, retry_after=None)
    bot.command("/blast-radius", "redis", fake_slack.response_url("once"), trigger_id="13345.98765.abc")
    fake_slack.wait_for(lambda: fake_slack.responses("once"), timeout=20)
    # The same invocation again (a replay carries the same trigger_id): not answered twice.
    bot.command("/blast-radius", "redis", fake_slack.response_url("once"), trigger_id="13345.98765.abc")
    # A new invocation of the same command is a new question: answered.
    bot.command("/blast-radius", "redis", fake_slack.response_url("again"))
    fake_slack.wait_for(lambda: fake_slack.responses("again"), timeout=20)
    time.sleep(1.0)
    [answer] = fake_slack.responses("once")
    assert "payments" in text_of(answer)
    assert len(fake_slack.attempts("response/once")) == 2
    assert 'oncall_graph_slack_deduplicated_total{kind="replay"} 1.0' in metric(bot, "deduplicated_total")


def test_a_slash_command_whose_answer_never_arrived_is_answered_by_its_replay_and_only_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    # The claim is taken while the answer is computed and settled after the post: a post that gave up
    # leaves it failed on disk, so the replay of the same invocation takes it again and answers.
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    bot = bot_factory(database_url=url)
    fake_slack.fail_next("response/lost", status=500, retry_after=None, times=ATTEMPTS)
    bot.command("/blast-radius", "redis", fake_slack.response_url("lost"), trigger_id="24680.13579.lost")
    settled(url, "command:24680.13579.lost", FAILED)
    assert fake_slack.responses("lost") == [] and len(fake_slack.attempts("response/lost")) == ATTEMPTS
    bot.command("/blast-radius", "redis", fake_slack.response_url("lost"), trigger_id="24680.13579.lost")
    fake_slack.wait_for(lambda: fake_slack.responses("lost"), timeout=20)
    settled(url, "command:24680.13579.lost", DELIVERED)
    bot.command("/blast-radius", "redis", fake_slack.response_url("lost"), trigger_id="24680.13579.lost")
    time.sleep(1.0)
    [answer] = fake_slack.responses("lost")
    assert "payments" in text_of(answer)
    assert 'oncall_graph_slack_deduplicated_total{kind="replay"} 1.0' in metric(bot, "deduplicated_total")


def test_a_post_slack_refuses_for_good_is_not_retried_and_its_claim_fails(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    bot = bot_factory(database_url=url)
    fake_slack.fail_next(POST, status=200, error="channel_not_found")
    bot.event(mention("1700000000.000300"), event_id="EvGone")
    settled(url, "event:EvGone", FAILED)
    assert len(fake_slack.attempts(POST)) == 1
    assert "could not post the mention answer to Slack: channel_not_found (not retryable)" in bot.output()
    assert 'reason="channel_not_found"' in metric(bot, "post_failures_total")


def test_retries_stop_at_their_bound_and_slacks_retry_of_the_event_is_then_answered(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'graph.db'}"
    bot = bot_factory(database_url=url)
    fake_slack.fail_next(POST, status=503, retry_after=None, times=ATTEMPTS)
    thread = "1700000000.000400"
    bot.event(mention(thread), event_id="EvDown")
    settled(url, "event:EvDown", FAILED)
    assert len(fake_slack.attempts(POST)) == ATTEMPTS and fake_slack.posted(POST) == []
    assert f"gave up after {ATTEMPTS} attempts" in bot.output()
    assert 'oncall_graph_slack_post_failures_total{reason="internal_error",what="mention"} 1.0' in metric(
        bot, "post_failures_total"
    )
    bot.event(mention(thread), event_id="EvDown", **RETRY)
    fake_slack.wait_for(lambda: replies(fake_slack, thread), timeout=20)
    settled(url, "event:EvDown", DELIVERED)
    bot.event(mention(thread), event_id="EvDown", **{**RETRY, "X-Slack-Retry-Num": "2"})
    time.sleep(1.5)
    assert len(replies(fake_slack, thread)) == 1


def test_an_answer_lost_on_one_replica_is_answered_by_the_other_on_one_postgresql(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, postgres_url: str, tmp_path: Path
) -> None:
    sources = write_sources(tmp_path / "shared")
    one = bot_factory("one", database_url=postgres_url, sources=sources)
    two = bot_factory("two", database_url=postgres_url, sources=sources)
    fake_slack.fail_next(POST, status=503, retry_after=None, times=ATTEMPTS)
    thread = "1700000000.000500"
    one.event(mention(thread), event_id="EvPg")
    settled(postgres_url, "event:EvPg", FAILED)
    two.event(mention(thread), event_id="EvPg", **RETRY)
    fake_slack.wait_for(lambda: replies(fake_slack, thread), timeout=20)
    settled(postgres_url, "event:EvPg", DELIVERED)
    one.event(mention(thread), event_id="EvPg", **{**RETRY, "X-Slack-Retry-Num": "2"})
    time.sleep(1.5)
    assert len(replies(fake_slack, thread)) == 1

"""What was left of the request boundary, over real HTTP: a mention's window outside the allowed
range is named as the slash command names it, and a chunked body past the cap is refused unlogged."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from bot.http import SLACK_MAX_BODY
from tests.e2e.conftest import Bot
from tests.e2e.test_slack_bot import mention, text_of
from tests.fakes.slack_api import FakeSlack

RANGE = "from 1 minute to 1 year (1m … 365d)"


def test_a_mention_with_a_window_outside_the_range_is_told_the_range_as_the_slash_command_is(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    asked = ["what changed in payments since 0h?", "what deployed in payments in the last 99999999999w?"]
    for number, question in enumerate(asked):
        bot.event(mention(f"1700000400.00010{number}", f"<@UBOT> {question}"), event_id=f"EvW{number}")
    fake_slack.wait_for(lambda: len(fake_slack.posted("chat.postMessage")) >= len(asked), timeout=20)
    replies = [text_of(post) for post in fake_slack.posted("chat.postMessage")]
    assert all(RANGE in reply for reply in replies), replies
    bot.command("/suspects", "payments 0h", fake_slack.response_url("slash"))
    fake_slack.wait_for(lambda: fake_slack.responses("slash"), timeout=20)
    assert RANGE in json.dumps(fake_slack.responses("slash"), ensure_ascii=False)
    bot.event(mention("1700000400.000200", "<@UBOT> what changed in payments in the last 2h?"), event_id="EvW9")
    fake_slack.wait_for(lambda: len(fake_slack.posted("chat.postMessage")) > len(asked), timeout=20)
    assert RANGE not in text_of(fake_slack.posted("chat.postMessage")[-1])  # a window in range is answered
    assert "Traceback" not in bot.output()


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        yield b"x" * min(size, total - sent)
        sent += size


def test_a_chunked_body_past_the_cap_gets_413_and_is_not_logged(bot_factory: Callable[..., Bot]) -> None:
    bot = bot_factory(PAGERDUTY_WEBHOOK_SECRETS="pd-secret")
    past = (("/slack/events", SLACK_MAX_BODY + 500_000), ("/slack/events", 3 * SLACK_MAX_BODY),
            ("/pagerduty/webhook", 400_000))  # fmt: skip
    for path, total in past:
        answer = bot.http.post(f"{bot.url}{path}", content=_chunks(total), headers={"Content-Type": "application/json"})
        assert answer.request.headers.get("transfer-encoding") == "chunked"
        assert answer.status_code == 413, (path, total, answer.status_code, answer.text[:200])
    assert "x" * 1000 not in bot.output() and len(bot.output()) < 200_000
    assert bot.http.get(f"{bot.url}/healthz").status_code == 200  # still serving

"""Pictures in Slack, through the running bot: each answer's PNG follows its message."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.bot.render.png import png_size
from tests.e2e.conftest import ALERTS, Bot
from tests.e2e.test_slack_bot import mention, only_response, pagerduty_alert, text_of
from tests.fakes.slack_api import FakeSlack


def pictures(fake: FakeSlack) -> list[dict[str, Any]]:
    return [u for u in fake.uploads() if str(u["filename"]).endswith(".png")]


def test_an_alert_thread_reply_is_followed_by_its_picture_in_the_thread(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    bot.event(pagerduty_alert("1700000700.000700"), event_id="EvPic1")
    fake_slack.wait_for(lambda: pictures(fake_slack), timeout=30)
    [picture] = pictures(fake_slack)
    assert (picture["channel"], picture["thread_ts"]) == (ALERTS, "1700000700.000700")
    assert picture["filename"] == "alert-payments.png" and picture["title"] == "Alert on payments"
    width, height = png_size(picture["data"])
    assert width > 200 and height > 50
    calls = fake_slack.calls()
    assert calls.index("chat.postMessage") < calls.index("files.getUploadURLExternal")  # the answer first


def test_blast_radius_command_sends_its_picture_to_the_asking_user_and_shares_it_with_the_answer(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    bot.command("/blast-radius", "redis", fake_slack.response_url("p1"), user="UALICE")
    response = only_response(fake_slack, "p1")
    assert response["response_type"] == "ephemeral" and "token-cache" in text_of(response)
    fake_slack.wait_for(lambda: pictures(fake_slack), timeout=30)
    [private] = pictures(fake_slack)
    assert private["channel"] == "DUALICE" and private["filename"] == "blast-radius-redis.png"
    assert png_size(private["data"])[0] > 0
    calls = fake_slack.calls()
    assert calls.index("response/p1") < calls.index("files.getUploadURLExternal")

    buttons = [e for b in response["blocks"] if b.get("type") == "actions" for e in b["elements"]]
    share = next(b for b in buttons if b["action_id"] == "share_answer")
    bot.action("share_answer", share["value"], fake_slack.response_url("p2"), user="UALICE")
    fake_slack.wait_for(lambda: len(pictures(fake_slack)) == 2, timeout=30)
    shared = pictures(fake_slack)[1]
    assert shared["channel"] == "COPS" and shared["thread_ts"] is None


def test_a_mention_asking_what_breaks_gets_a_picture_in_its_thread(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    bot.event(mention("1700000800.000800"), event_id="EvPic2")
    fake_slack.wait_for(lambda: pictures(fake_slack), timeout=30)
    [picture] = pictures(fake_slack)
    assert (picture["channel"], picture["thread_ts"]) == ("COPS", "1700000800.000800")
    assert picture["filename"] == "blast-radius-token-cache.png"


def test_a_failed_upload_is_logged_and_the_answer_still_arrives(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    fake_slack.fail_next("files.getUploadURLExternal", status=500, retry_after=None, times=4)  # every attempt
    bot.event(pagerduty_alert("1700000900.000900"), event_id="EvPic3")
    fake_slack.wait_for(lambda: fake_slack.calls().count("files.getUploadURLExternal") == 4, timeout=30)
    [reply] = fake_slack.posted("chat.postMessage")
    assert "antifraud" in text_of(reply)
    deadline = time.monotonic() + 10
    while "could not attach the picture" not in bot.output() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "could not attach the picture" in bot.output()
    assert pictures(fake_slack) == []


def test_without_graphviz_answers_are_text_only_and_the_bot_warns_once(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    empty = tmp_path / "no-graphviz"
    empty.mkdir()
    bot = bot_factory(PATH=str(empty))
    for n in (1, 2):
        bot.command("/blast-radius", "redis", fake_slack.response_url(f"t{n}"))
        assert "token-cache" in text_of(only_response(fake_slack, f"t{n}"))
    bot.event(pagerduty_alert("1700001000.001000"), event_id="EvPic4")
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=30)
    time.sleep(1.5)  # any picture would follow its answer within this
    assert fake_slack.uploads(pending=True) == []
    assert "conversations.open" not in fake_slack.calls()  # no direct message opened for nothing
    assert bot.output().count("Graphviz `dot` was not found") == 1


def test_the_direct_message_for_a_users_picture_is_opened_again_when_slack_fails_the_first_time(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    fake_slack.fail_next("conversations.open", 503)
    bot.command("/blast-radius", "redis", fake_slack.response_url("dm1"), user="UBOB")
    only_response(fake_slack, "dm1")
    fake_slack.wait_for(lambda: pictures(fake_slack), timeout=30)
    [private] = pictures(fake_slack)
    assert private["channel"] == "DUBOB"
    assert len(fake_slack.attempts("conversations.open")) == 2
    assert "posting the direct-message answer to Slack failed (internal_error); attempt 2" in bot.output()

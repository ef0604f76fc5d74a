"""Attachments (full texts, pictures) go up after their answers, and let answers in progress go first."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from bot.slack.answer_slots import AnswerSlots
from bot.slack.attachments import Attachments, direct_channel, upload_full_text
from bot.slack.blocks.kit import SlackMessage, message, section
from bot.slack.retrying import Poster, RetryPolicy
from bot.telemetry.metrics import Metrics
from tests.fakes.slack_api import FakeSlack, slack_api


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with slack_api() as running:
        yield running


def test_step_aside_waits_for_the_answers_in_progress() -> None:
    slots, finished = AnswerSlots(), threading.Event()

    def answer() -> None:
        with slots:
            finished.wait(5)

    worker = threading.Thread(target=answer)
    worker.start()
    while not slots.busy:
        time.sleep(0.001)
    stepped = threading.Event()

    def step_aside() -> None:
        slots.step_aside()
        stepped.set()

    waiter = threading.Thread(target=step_aside)
    waiter.start()
    assert not stepped.wait(0.2)  # still answering: background work waits
    finished.set()
    assert stepped.wait(5)
    worker.join()
    waiter.join()


def test_step_aside_gives_up_waiting_after_its_longest_pause() -> None:
    slots = AnswerSlots(longest_pause=0.05)
    with slots:
        slots.step_aside()  # returns although this answer still runs
        assert slots.busy
    assert not slots.busy


def test_a_full_text_is_written_in_the_gaps_between_answers_and_uploaded_whole(fake: FakeSlack) -> None:
    slots = AnswerSlots(longest_pause=10)
    written: list[int] = []

    def pieces() -> Iterator[str]:
        for i in range(20):
            time.sleep(0.01)  # each piece is a step's worth of work
            written.append(i)
            yield f"line {i}\n"

    attachments = Attachments(slots)
    client = WebClient(token="xoxb-test", base_url=fake.url)
    with slots:  # an answer is being computed when the attachment is handed over
        attachments.send(client, SlackMessage("Blast radius", (), pieces), channel="C1")
        time.sleep(0.3)
        assert len(written) <= 2  # the writer stepped aside at its first step
    fake.wait_for(fake.uploads, timeout=10)
    attachments.close()
    [upload] = fake.uploads()
    assert upload["content"] == "".join(f"line {i}\n" for i in range(20))
    assert upload["filename"] == "blast-radius.txt"


def test_an_attachment_for_one_user_goes_to_a_direct_message(fake: FakeSlack) -> None:
    attachments = Attachments(AnswerSlots())
    client = WebClient(token="xoxb-test", base_url=fake.url)
    future = attachments.send(client, SlackMessage("answer", (), lambda: ["all of it\n"]), user="U1")
    assert future is not None
    future.result(timeout=10)
    attachments.close()
    [upload] = fake.uploads()
    assert upload["content"] == "all of it\n"
    assert fake.posted("conversations.open")


def test_opening_the_direct_message_is_retried_like_every_other_call(fake: FakeSlack) -> None:
    metrics = Metrics()
    attachments = Attachments(AnswerSlots(), poster=Poster(metrics, RetryPolicy(sleep=lambda _: None)))
    client = WebClient(token="xoxb-test", base_url=fake.url, retry_handlers=[])
    fake.fail_next("conversations.open", 503)
    fake.fail_next("conversations.open", reset=True)
    future = attachments.send(client, SlackMessage("answer", (), lambda: ["all of it\n"]), user="U1")
    assert future is not None
    future.result(timeout=10)
    attachments.close()
    assert len(fake.attempts("conversations.open")) == 3
    [upload] = fake.uploads()
    assert upload["content"] == "all of it\n" and upload["channel"] == "DU1"
    retried = metrics.registry.get_sample_value
    assert retried("oncall_graph_slack_post_retries_total", {"what": "direct-message", "reason": "internal_error"}) == 1


def test_a_direct_message_slack_refuses_for_good_is_given_up_at_once_and_counted(fake: FakeSlack) -> None:
    metrics = Metrics()
    poster = Poster(metrics, RetryPolicy(sleep=lambda _: None))
    client = WebClient(token="xoxb-test", base_url=fake.url, retry_handlers=[])
    fake.fail_next("conversations.open", 200, error="user_not_found")
    assert direct_channel(client, "UGONE", poster) == ""
    assert len(fake.attempts("conversations.open")) == 1
    failed = metrics.registry.get_sample_value
    assert failed("oncall_graph_slack_post_failures_total", {"what": "direct-message", "reason": "user_not_found"}) == 1


def test_a_message_with_nothing_to_attach_sends_nothing(fake: FakeSlack) -> None:
    attachments = Attachments(AnswerSlots())
    client = WebClient(token="xoxb-test", base_url=fake.url)
    assert attachments.send(client, SlackMessage("short answer", ()), channel="C1") is None
    attachments.close()
    assert fake.uploads(pending=True) == []


def test_a_request_being_received_counts_as_an_answer_without_taking_a_slot() -> None:
    slots = AnswerSlots(slots=1, longest_pause=0.05)
    with slots.arriving():
        assert slots.busy
        with slots:  # the one slot is still free for the answer itself
            assert slots.busy
    assert not slots.busy


def test_a_full_text_file_is_titled_in_plain_words_that_cannot_ping(fake: FakeSlack) -> None:
    client = WebClient(token="xoxb-test", base_url=fake.url)
    answer = message("If <!channel> & <@U1> goes down\u202e: 3 break", [section("x")], lambda: ["the whole answer\n"])
    upload_full_text(client, answer, channel="C1")
    [shared] = fake.uploads()
    assert shared["title"] == "Full answer: If \u2039!channel\u203a & \u2039@U1\u203a goes down\ufffd: 3 break"
    assert shared["content"] == "the whole answer\n" and shared["initial_comment"] is None

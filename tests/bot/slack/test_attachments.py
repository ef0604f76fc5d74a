"""Attachments (full texts, pictures) go up after their answers, and let answers in progress go first."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from bot.slack.answer_slots import AnswerSlots
from bot.slack.attachments import Attachments, upload_full_text
from bot.slack.blocks.kit import SlackMessage, message, section
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

"""Bolt's listener pool: the request's thread goes on as soon as the listener acks, not when it ends."""

from __future__ import annotations

import threading

from slack_bolt import BoltContext

from bot.slack.listener_pool import ListenerPool, signal_acks


def test_submit_returns_once_the_listener_acks_while_it_still_answers() -> None:
    context = BoltContext()
    signal_acks(context, lambda: None)  # as Bolt runs it, on the request's thread
    answering = threading.Event()
    finish = threading.Event()

    def listener() -> None:
        context.ack()
        answering.set()
        finish.wait(10)

    with ListenerPool(max_workers=2) as pool:
        future = pool.submit(listener)
        assert context.ack.response is not None and context.ack.response.status == 200  # what Bolt looks for
        assert not future.done()  # still answering: submit did not wait for the whole listener
        finish.set()
        future.result(timeout=10)
    assert answering.is_set()


def test_a_listener_that_ends_without_an_ack_lets_the_request_go_too() -> None:
    context = BoltContext()
    signal_acks(context, lambda: None)
    with ListenerPool(max_workers=1) as pool:
        future = pool.submit(lambda: None)
        assert future.done() and context.ack.response is None  # Bolt then answers for it, as before

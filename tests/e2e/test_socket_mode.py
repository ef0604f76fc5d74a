"""The bot in Socket Mode: it opens a WebSocket from apps.connections.open, acknowledges each
envelope, and answers the same way as over HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.e2e.conftest import Bot
from tests.e2e.test_slack_bot import only_response, text_of
from tests.fakes.slack_api import FakeSlack
from tests.fakes.socket_mode import FakeSocketMode, socket_mode_server


@pytest.fixture
def socket_mode(fake_slack: FakeSlack) -> Iterator[FakeSocketMode]:
    with socket_mode_server() as fake:
        fake_slack.socket_url = fake.url
        yield fake


def test_slash_command_over_socket_mode_is_acked_and_answered(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, socket_mode: FakeSocketMode
) -> None:
    bot_factory(SLACK_APP_TOKEN="xapp-test")
    socket_mode.wait_connected()
    opened = [r for r in fake_slack.requests if r.name == "apps.connections.open"]
    assert opened and opened[0].headers["authorization"] == "Bearer xapp-test"
    payload = {
        "token": "x", "team_id": "T1", "channel_id": "COPS", "user_id": "UUSER", "command": "/blast-radius",
        "text": "redis", "response_url": fake_slack.response_url("sm1"), "trigger_id": "1.2.3",
    }  # fmt: skip
    envelope = socket_mode.push("slash_commands", payload, accepts_response_payload=True)
    assert socket_mode.wait_ack(envelope)["envelope_id"] == envelope
    shown = text_of(only_response(fake_slack, "sm1"))
    assert "auth-service -depends_on-> token-cache" in shown and "kafka" in shown


def test_mention_over_socket_mode_is_answered_once_in_its_thread(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, socket_mode: FakeSocketMode
) -> None:
    bot = bot_factory(SLACK_APP_TOKEN="xapp-test")
    event = {"type": "app_mention", "user": "UUSER", "channel": "COPS", "ts": "1700000000.000100",
             "text": "<@UBOT> what breaks if the token cache goes down?"}  # fmt: skip
    callback = {"token": "x", "team_id": "T1", "api_app_id": "AOG", "type": "event_callback",
                "event_id": "Ev-sm-1", "event_time": int(time.time()), "event": event}  # fmt: skip
    first = socket_mode.push("events_api", callback)
    again = socket_mode.push("events_api", callback)  # Slack redelivers when an ack is late
    socket_mode.wait_ack(first)
    socket_mode.wait_ack(again)
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=20)
    time.sleep(0.5)  # a second reply, if any, would have been posted by now
    [reply] = fake_slack.posted("chat.postMessage")
    assert reply["thread_ts"] == "1700000000.000100"
    assert "auth-service" in text_of(reply)
    # HTTP still serves health and metrics; Slack requests arrive over the socket only.
    assert httpx.get(f"{bot.url}/healthz", timeout=5).status_code == 200
    assert httpx.post(f"{bot.url}/slack/events", content=b"{}", timeout=5).status_code == 404

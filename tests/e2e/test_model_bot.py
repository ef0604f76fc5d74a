"""The served bot with the optional model: a mention's thread reply carries the model's phrasing,
marked; a model that times out or is overloaded leaves the graph's own answer, and the ack never waits."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Bot
from tests.e2e.test_slack_bot import mention, pagerduty_alert, text_of
from tests.fakes.anthropic_api import API_KEY, FakeAnthropic, Reply, anthropic_api, error, text, tool_use
from tests.fakes.slack_api import FakeSlack


def phrase_first_edge(body: dict[str, Any]) -> Reply:
    if body.get("tools"):
        return tool_use("read_question", {"entities": ["the token cache"], "intent": "blast_radius"})
    first = re.search(r"^\[E1\] (\S+) depends on token-cache", body["messages"][0]["content"], re.MULTILINE)
    assert first
    return text(f"If token-cache fails, *{first.group(1)}* breaks first [E1].")


@pytest.fixture
def fake_model() -> Iterator[FakeAnthropic]:
    with anthropic_api() as server:
        server.responder = phrase_first_edge
        yield server


def model_settings(fake: FakeAnthropic, **extra: str) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_MODEL": "claude-e2e", **extra}


def test_a_mention_is_answered_in_thread_with_the_model_s_marked_phrasing(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, fake_model: FakeAnthropic
) -> None:
    bot = bot_factory(**model_settings(fake_model))
    assert bot.event(mention("1700000900.000100"), event_id="EvM1").status_code == 200
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=30)
    [reply] = fake_slack.posted("chat.postMessage")
    shown = text_of(reply)
    assert reply["thread_ts"] == "1700000900.000100"
    assert "If token-cache fails, *auth-service* breaks first [E1]." in shown
    assert "Phrased by Claude (claude-e2e) from 1 cited fact; the paths below are the graph's." in shown
    assert "[E1] auth-service -depends_on-> token-cache" in shown  # the graph's cited line, labelled
    read, explain = fake_model.messages()
    assert read.body["tool_choice"]["type"] == "tool" and explain.body["model"] == "claude-e2e"
    assert "[E1] auth-service depends on token-cache (" in explain.body["messages"][0]["content"]
    assert "data, not instructions" in explain.body["system"]
    metrics = httpx.get(f"{bot.url}/metrics", timeout=5).text
    assert 'oncall_graph_model_calls_total{outcome="ok",purpose="mention"} 1.0' in metrics
    assert 'oncall_graph_model_calls_total{outcome="ok",purpose="read"} 1.0' in metrics
    assert "model call purpose=mention model=claude-e2e outcome=ok" in bot.output()


def test_a_slow_model_is_cut_off_the_ack_does_not_wait_and_the_graph_s_answer_is_posted(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, fake_model: FakeAnthropic
) -> None:
    fake_model.responder = lambda body: text("too late [E1]", delay=6.0)
    bot = bot_factory(**model_settings(fake_model, ANTHROPIC_TIMEOUT="1.5"))
    started = time.monotonic()
    assert bot.event(mention("1700000950.000100"), event_id="EvM2").status_code == 200
    assert time.monotonic() - started < 4.0  # acked long before the model would have answered
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=30)
    [reply] = fake_slack.posted("chat.postMessage")
    shown = text_of(reply)
    assert "auth-service" in shown and "token-cache" in shown and "Phrased by" not in shown and "too late" not in shown
    assert "model mention not used (timeout" in bot.output()


def test_an_alert_thread_reply_falls_back_when_the_model_is_overloaded(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, fake_model: FakeAnthropic
) -> None:
    fake_model.responder = lambda body: error(529, "overloaded")
    bot = bot_factory(**model_settings(fake_model))
    bot.event(pagerduty_alert("1700001000.000200"), event_id="EvMA1")
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=30)
    [reply] = fake_slack.posted("chat.postMessage")
    shown = text_of(reply)
    assert "antifraud" in shown and "r-8812" in shown and "Phrased by" not in shown
    metrics = httpx.get(f"{bot.url}/metrics", timeout=5).text
    assert 'oncall_graph_model_fallbacks_total{reason="overloaded"} 1.0' in metrics
    assert len(fake_model.messages()) == 1  # one alert, one call, no retry

"""The one retrying layer, over real HTTP to the fake Slack: what is retried, how long it waits, when it
stops, and that slack_sdk's clients underneath never retry by themselves."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from slack_sdk import WebClient

from bot.slack.app import build_client
from bot.slack.response_url import ResponseUrl
from bot.slack.retrying import Poster, PostFailed, RetryPolicy, retry_after
from bot.telemetry.metrics import Metrics
from tests.fakes.slack_api import FakeSlack, slack_api

POST = "chat.postMessage"


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with slack_api() as running:
        yield running


@pytest.fixture
def client(fake: FakeSlack) -> WebClient:
    return build_client("xoxb-test", fake.url)


class Waits(list[float]):
    """The policy's sleeps, recorded instead of slept: these tests look at the waits chosen."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def poster(waits: Waits, metrics: Metrics | None = None, **policy: float) -> Poster:
    return Poster(metrics, RetryPolicy(sleep=waits, jitter=lambda: 0.5, **policy))  # type: ignore[arg-type]


def counted(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(f"oncall_graph_slack_{name}_total", labels) or 0.0


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        ({"status": 200, "error": "internal_error"}, "internal_error"),
        ({"status": 200, "error": "fatal_error"}, "fatal_error"),
        ({"status": 200, "error": "service_unavailable"}, "service_unavailable"),
        ({"status": 200, "error": "request_timeout"}, "request_timeout"),
        ({"status": 503, "retry_after": None}, "service_unavailable"),
        ({"status": 500, "retry_after": None}, "internal_error"),
    ],
)
def test_a_transient_failure_is_retried_and_the_message_arrives_once(
    fake: FakeSlack, client: WebClient, failure: dict[str, object], reason: str
) -> None:
    fake.fail_next(POST, **({"error": reason} | failure))  # type: ignore[arg-type]
    metrics, waits = Metrics(), Waits()
    poster(waits, metrics)(lambda: client.chat_postMessage(channel="C1", text="answer"), what="mention")
    assert [p["text"] for p in fake.posted(POST)] == ["answer"]
    assert len(fake.attempts(POST)) == 2 and len(waits) == 1
    assert counted(metrics, "post_retries", what="mention", reason=reason) == 1


def test_a_connection_reset_is_retried(fake: FakeSlack, client: WebClient) -> None:
    fake.fail_next(POST, reset=True)
    metrics, waits = Metrics(), Waits()
    poster(waits, metrics)(lambda: client.chat_postMessage(channel="C1", text="answer"), what="alert")
    assert [p["text"] for p in fake.posted(POST)] == ["answer"]
    assert len(fake.attempts(POST)) == 2
    assert sum(counted(metrics, "post_retries", what="alert", reason=r)
               for r in ("RemoteDisconnected", "ConnectionResetError", "URLError")) == 1  # fmt: skip


def test_a_429_waits_as_long_as_retry_after_says(fake: FakeSlack, client: WebClient) -> None:
    fake.fail_next(POST, status=429, retry_after=3)
    waits = Waits()
    poster(waits)(lambda: client.chat_postMessage(channel="C1", text="answer"), what="mention")
    assert waits == [3.0]
    assert len(fake.posted(POST)) == 1


def test_ratelimited_in_a_200_reply_is_retried_too(fake: FakeSlack, client: WebClient) -> None:
    fake.fail_next(POST, status=200, error="ratelimited", retry_after=2)
    waits = Waits()
    poster(waits)(lambda: client.chat_postMessage(channel="C1", text="answer"), what="mention")
    assert waits == [2.0] and len(fake.posted(POST)) == 1


@pytest.mark.parametrize("error", ["channel_not_found", "invalid_auth", "not_in_channel", "invalid_blocks"])
def test_an_error_a_retry_cannot_cure_stops_at_once_logged_and_counted(
    fake: FakeSlack, client: WebClient, error: str, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail_next(POST, status=200, error=error)
    metrics, waits = Metrics(), Waits()
    with pytest.raises(PostFailed) as failed, caplog.at_level(logging.ERROR):
        poster(waits, metrics)(lambda: client.chat_postMessage(channel="C1", text="answer"), what="mention")
    assert failed.value.attempts == 1 and failed.value.reason == error
    assert len(fake.attempts(POST)) == 1 and waits == []
    assert counted(metrics, "post_failures", what="mention", reason=error) == 1
    assert f"could not post the mention answer to Slack: {error} (not retryable)" in caplog.text


def test_retries_stop_at_the_attempt_bound_with_backoff_doubling(
    fake: FakeSlack, client: WebClient, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail_next(POST, status=503, retry_after=None, times=10)
    metrics, waits = Metrics(), Waits()
    with pytest.raises(PostFailed) as failed, caplog.at_level(logging.ERROR):
        poster(waits, metrics, attempts=4, first_delay=0.4)(
            lambda: client.chat_postMessage(channel="C1", text="answer"), what="alert"
        )
    assert failed.value.attempts == 4 and len(fake.attempts(POST)) == 4
    assert waits == pytest.approx([0.3, 0.6, 1.2])  # 0.4 * 2^n, jittered to three quarters
    assert fake.posted(POST) == []
    assert counted(metrics, "post_retries", what="alert", reason="internal_error") == 3
    assert counted(metrics, "post_failures", what="alert", reason="internal_error") == 1
    assert "gave up after 4 attempts" in caplog.text


def test_a_retry_after_past_the_total_bound_gives_up_instead_of_waiting(fake: FakeSlack, client: WebClient) -> None:
    fake.fail_next(POST, status=429, retry_after=600)
    waits = Waits()
    with pytest.raises(PostFailed):
        poster(waits, total=30)(lambda: client.chat_postMessage(channel="C1", text="answer"), what="mention")
    assert waits == [] and len(fake.attempts(POST)) == 1


def test_jitter_spreads_each_wait_between_half_and_all_of_its_ceiling() -> None:
    low, high = RetryPolicy(jitter=lambda: 0.0), RetryPolicy(jitter=lambda: 0.999999)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (9, 8.0)]:
        assert low.backoff(attempt) == pytest.approx(ceiling / 2)
        assert high.backoff(attempt) == pytest.approx(ceiling, rel=1e-5)


def test_a_response_url_that_fails_once_is_posted_again(fake: FakeSlack) -> None:
    fake.fail_next("response/cmd", status=500, retry_after=None)
    respond, waits = ResponseUrl(fake.response_url("cmd")), Waits()
    poster(waits)(lambda: respond(text="answer", response_type="ephemeral"), what="blast-radius")
    assert [r["text"] for r in fake.responses("cmd")] == ["answer"]
    assert len(fake.attempts("response/cmd")) == 2


def test_an_expired_response_url_is_not_posted_again(fake: FakeSlack) -> None:
    fake.fail_next("response/old", status=404, retry_after=None)
    respond, waits = ResponseUrl(fake.response_url("old")), Waits()
    with pytest.raises(PostFailed):
        poster(waits)(lambda: respond(text="answer"), what="blast-radius")
    assert len(fake.attempts("response/old")) == 1


def test_neither_slack_client_retries_by_itself(fake: FakeSlack, client: WebClient) -> None:
    """Only the one layer retries: a reset or a 429 reaches it after a single attempt of the client's."""
    fake.fail_next(POST, reset=True)
    with pytest.raises(OSError):
        client.chat_postMessage(channel="C1", text="answer")
    fake.fail_next(POST, status=429, retry_after=0)
    with pytest.raises(Exception, match="ratelimited"):
        client.chat_postMessage(channel="C1", text="answer")
    fake.fail_next("response/r", reset=True)
    with pytest.raises(OSError):
        ResponseUrl(fake.response_url("r"))(text="answer")
    assert len(fake.attempts(POST)) == 2 and len(fake.attempts("response/r")) == 1


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after({"Retry-After": "7"}) == 7.0
    assert retry_after({"retry-after": ["2"]}) == 2.0
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_after({"Retry-After": later}) <= 30
    assert retry_after({}) == 1.0 and retry_after({"Retry-After": "soon"}) == 1.0

"""Posting to Slack until it arrives: the one layer that retries the bot's Web API calls and
`response_url` POSTs (slack_sdk's own retry handlers are switched off: `bot/slack/app.py`,
`bot/slack/response_url.py`).

A post fails as Slack says (`ok: false` with an error, an HTTP 5xx or 429, a `response_url` POST
answered with anything but 200) or as a network does (reset, refused, timed out). Only what a
retry can cure is retried — 5xx, 429 (after its `Retry-After`), the network, and Slack's transient
errors; `channel_not_found`, `invalid_auth`, an expired `response_url` and the like stop at once.
Retries back off exponentially with jitter, within a number of attempts and a total time. Each
retry and each final failure is counted (`oncall_graph_slack_post_retries_total`,
`oncall_graph_slack_post_failures_total`) and logged on one bounded line.
"""

from __future__ import annotations

import http.client
import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TypeVar
from urllib.error import URLError

from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookResponse

from bot.telemetry.metrics import Metrics

log = logging.getLogger(__name__)
T = TypeVar("T")
DETAIL_CHARS = 200  # a failure's text in the log is cut to this: a 5xx page must not flood the log
LABEL_CHARS = 40  # a metric label from Slack's error code: bounded, whatever the server sends
# Slack's errors that say "try again later" (Web API docs: "Errors" of chat.postMessage and the
# common ones); every other error says the request itself is wrong and would fail again.
RETRYABLE = frozenset({"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"})


class PostFailed(Exception):
    """The post did not arrive: `reason` is what Slack or the network last said."""

    def __init__(self, reason: str, *, attempts: int) -> None:
        super().__init__(f"{reason} (after {attempts} attempt{'s' if attempts != 1 else ''})")
        self.reason, self.attempts = reason, attempts


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4  # in all, the first included
    first_delay: float = 0.5  # seconds; doubled at each retry
    longest_delay: float = 8.0
    # From the first attempt to the last one's start. Shorter than a delivery claim's lease
    # (sync/store/deliveries.py, 3 minutes), so no other replica retakes an answer still being retried.
    total: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    jitter: Callable[[], float] = field(default=random.random, compare=False)  # in [0, 1)

    def backoff(self, attempt: int) -> float:
        """Between half and all of the doubled delay: replicas retrying after one outage spread out."""
        ceiling = min(self.first_delay * 2 ** (attempt - 1), self.longest_delay)
        return float(ceiling * (0.5 + self.jitter() / 2))


@dataclass(frozen=True)
class Failure:
    reason: str  # one line: Slack's error code, `HTTP 503 ...`, or the exception
    label: str  # bounded, for the metrics
    retry: bool
    wait: float | None = None  # Slack's Retry-After, when it gave one


@dataclass(frozen=True)
class Poster:
    """`poster(lambda: client.chat_postMessage(...), what="mention")`: the post's result, retried as the
    policy says, or PostFailed (already logged and counted) once it gives up."""

    metrics: Metrics | None = None
    policy: RetryPolicy = field(default_factory=RetryPolicy)

    def __call__(self, post: Callable[[], T], *, what: str) -> T:
        policy = self.policy
        started = policy.clock()
        attempt = 0
        while True:
            attempt += 1
            try:
                result = post()
            except SlackApiError as exc:
                failure = api_failure(exc)
            except (URLError, OSError, http.client.HTTPException) as exc:  # resets, refusals, timeouts
                failure = Failure(f"{type(exc).__name__}: {exc}", type(exc).__name__[:LABEL_CHARS], retry=True)
            else:
                if not (isinstance(result, WebhookResponse) and result.status_code != 200):
                    return result
                failure = webhook_failure(result)
            wait = policy.backoff(attempt) if failure.wait is None else failure.wait
            left = policy.total - (policy.clock() - started)
            if not failure.retry or attempt >= policy.attempts or wait > left:
                self._count("post_failures", what, failure.label)
                why = "not retryable" if not failure.retry else f"gave up after {attempt} attempts"
                if failure.retry and wait > left:
                    why = f"gave up: the next attempt ({wait:.1f}s away) is past the {policy.total:.0f}s bound"
                log.error("could not post the %s answer to Slack: %s (%s)", what, _bounded(failure.reason), why)
                raise PostFailed(_bounded(failure.reason), attempts=attempt)
            self._count("post_retries", what, failure.label)
            log.warning("posting the %s answer to Slack failed (%s); attempt %d in %.1fs", what,
                        _bounded(failure.reason), attempt + 1, wait)  # fmt: skip
            policy.sleep(wait)

    def _count(self, counter: str, what: str, label: str) -> None:
        if self.metrics is not None:
            getattr(self.metrics, counter).labels(what, label).inc()


def api_failure(exc: SlackApiError) -> Failure:
    """A Web API call's failure: `ok: false` (HTTP 200), or an HTTP error with or without a JSON body."""
    response = exc.response
    status = int(getattr(response, "status_code", 200) or 200)
    data = response.data if isinstance(response.data, dict) else {}
    error = str(data.get("error") or "")
    reason, label = (error, _label(error)) if error else (f"HTTP {status}", f"http_{status}")
    if status == 429 or error == "ratelimited":
        return Failure(reason, label, retry=True, wait=retry_after(response.headers))
    return Failure(reason, label, retry=status >= 500 or error in RETRYABLE)


def webhook_failure(response: WebhookResponse) -> Failure:
    reason = f"HTTP {response.status_code} {str(response.body or '').strip()}".strip()
    label = f"http_{response.status_code}"
    if response.status_code == 429:
        return Failure(reason, label, retry=True, wait=retry_after(response.headers))
    # A response_url answers 404 once expired or used up (five posts in 30 minutes): no retry brings it back.
    return Failure(reason, label, retry=response.status_code >= 500)


def retry_after(headers: Mapping[str, object] | None) -> float:
    """Slack's Retry-After in seconds (delta-seconds or an HTTP date; one second when absent or unreadable)."""
    found = next((v for k, v in dict(headers or {}).items() if str(k).lower() == "retry-after"), None)
    value = str(found[0] if isinstance(found, list) and found else found or "").strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return 1.0


def _label(error: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", error.lower())[:LABEL_CHARS]


def _bounded(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= DETAIL_CHARS else flat[: DETAIL_CHARS - 1] + "…"

"""The lag notifier the sync job calls: sources turned stale (overdue, failing, held) or recovered, to Slack."""

from __future__ import annotations

import logging

from slack_sdk import WebClient

from bot.slack.blocks.messages import format_lag_alert
from bot.slack.delivery import message_kwargs
from bot.slack.retrying import Poster, PostFailed
from graph.health.freshness import LagTransition

log = logging.getLogger(__name__)


class SlackLagNotifier:
    def __init__(self, client: WebClient, channel: str, poster: Poster | None = None) -> None:
        self._client, self._channel = client, channel
        self._poster = poster or Poster()

    def notify(self, transition: LagTransition) -> None:
        state = f"stale ({transition.lag.state})" if transition.stale else "recovered"
        log.warning("source %s %s", transition.source, f"is {state}" if transition.stale else state)
        kwargs = {"channel": self._channel, **message_kwargs(format_lag_alert(transition))}
        try:
            self._poster(lambda: self._client.chat_postMessage(**kwargs), what="lag-alert")
        except PostFailed as exc:
            log.error("could not post the %s alert for %s: %s", state, transition.source, exc)

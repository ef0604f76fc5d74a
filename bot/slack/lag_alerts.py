"""The lag notifier the sync job calls: sources turned stale (overdue, failing, held) or recovered, to Slack."""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.blocks.messages import format_lag_alert
from bot.slack.delivery import message_kwargs
from graph.freshness import LagTransition

log = logging.getLogger(__name__)


class SlackLagNotifier:
    def __init__(self, client: WebClient, channel: str) -> None:
        self._client, self._channel = client, channel

    def notify(self, transition: LagTransition) -> None:
        state = f"stale ({transition.lag.state})" if transition.stale else "recovered"
        log.warning("source %s %s", transition.source, f"is {state}" if transition.stale else state)
        try:
            self._client.chat_postMessage(channel=self._channel, **message_kwargs(format_lag_alert(transition)))
        except SlackApiError as exc:
            log.error("could not post the %s alert for %s: %s", state, transition.source, exc.response.get("error"))

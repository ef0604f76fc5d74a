"""A slash command's or button's `response_url`, posted to as Bolt's `respond` does, but with no
retry of its own: `bot/slack/retrying` is the one layer that retries (Bolt's client would retry a
connection error once more on top of it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_bolt import Respond
from slack_sdk.webhook import WebhookClient, WebhookResponse

TIMEOUT = 10  # seconds for one POST; the retrying layer bounds them all together

Responder = Callable[..., WebhookResponse]  # respond(text=..., blocks=..., response_type=...)


class ResponseUrl:
    def __init__(self, url: str | None, *, timeout: int = TIMEOUT) -> None:
        self.url = url
        self.timeout = timeout

    @classmethod
    def of(cls, respond: Respond) -> ResponseUrl:
        """The same `response_url` Bolt found in the request."""
        return cls(respond.response_url)

    def __call__(self, **message: Any) -> WebhookResponse:
        if not self.url:
            raise ValueError("this request carries no response_url to answer on")
        client = WebhookClient(self.url, timeout=self.timeout, retry_handlers=[])
        return client.send_dict({key: value for key, value in message.items() if value is not None})

"""Putting a SlackMessage in front of people: as a command response, or in an alert's thread.

An answer cut to fit Slack's limits carries its full text; that goes up as a file next to it
(in the thread, or to the asking user alone when the answer itself is only visible to them).
A blast radius, suspects or alert answer also carries its picture: it goes to the same place. Both
are written and uploaded off the request's thread once the message is out (`bot/slack/attachments`), so
they never delay an answer and a failed upload never loses one. The message itself is retried until it
arrives or the policy gives up (`bot/slack/retrying`): PostFailed then tells the caller it never did.
"""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from bot.slack.attachments import Attachments, direct_channel, upload_full_text
from bot.slack.blocks.messages import SlackMessage
from bot.slack.response_url import Responder
from bot.slack.retrying import Poster
from bot.telemetry.tracing import stage_span


def message_kwargs(message: SlackMessage) -> dict[str, Any]:
    return {"text": message.text, "blocks": list(message.blocks)}


def respond_with(
    respond: Responder,
    client: WebClient,
    message: SlackMessage,
    *,
    channel: str,
    user: str,
    shared: bool,
    poster: Poster,
    what: str,
    attachments: Attachments | None = None,
) -> None:
    """Ephemeral unless shared; a cut answer's full text and the picture go to the channel when
    shared, else to the user alone (an ephemeral answer has no thread to hold files)."""
    kwargs = {"response_type": "in_channel" if shared else "ephemeral", **message_kwargs(message)}
    with stage_span("post"):
        poster(lambda: respond(**kwargs), what=what)
    if attachments is not None:
        attachments.send(client, message, channel=channel if shared else "", user=user)
    elif message.cut and (target := channel if shared else direct_channel(client, user, poster)):
        upload_full_text(client, message, channel=target, poster=poster)


def say_in_thread(
    client: WebClient,
    message: SlackMessage,
    *,
    channel: str,
    thread_ts: str,
    poster: Poster,
    what: str,
    attachments: Attachments | None = None,
) -> None:
    kwargs = {"channel": channel, "thread_ts": thread_ts, **message_kwargs(message)}
    with stage_span("post"):
        poster(lambda: client.chat_postMessage(**kwargs), what=what)
    if attachments is not None:
        attachments.send(client, message, channel=channel, thread_ts=thread_ts)
    else:
        upload_full_text(client, message, channel=channel, thread_ts=thread_ts, poster=poster)

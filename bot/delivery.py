"""Putting a SlackMessage in front of people: as a command response, or in an alert's thread.

An answer cut to fit Slack's limits carries its full text; that goes up as a file next to it
(in the thread, or to the asking user alone when the answer itself is only visible to them).
A blast radius, suspects or alert answer also carries its picture: it goes to the same place, drawn
and uploaded off the request's thread once the message is out (`bot/picture_upload`), so drawing
never delays an answer and a failed picture never loses one.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt import Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks import SlackMessage
from bot.picture_upload import PictureUploads

log = logging.getLogger(__name__)


def message_kwargs(message: SlackMessage) -> dict[str, Any]:
    return {"text": message.text, "blocks": list(message.blocks)}


def _filename(message: SlackMessage) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", message.text.lower()).strip("-")[:60] or "answer"
    return f"{stem}.txt"


def upload_full_text(client: WebClient, message: SlackMessage, *, channel: str, thread_ts: str | None = None) -> None:
    full_text = message.full_text  # written only now, after the message itself has gone out
    if not full_text:
        return
    try:
        client.files_upload_v2(
            channel=channel,
            thread_ts=thread_ts,
            content=full_text,
            filename=_filename(message),
            title=f"Full answer: {message.text[:80]}",
        )
    except SlackApiError as exc:
        log.warning("could not attach the full answer as a file in %s: %s", channel, exc.response.get("error"))


def respond_with(
    respond: Respond,
    client: WebClient,
    message: SlackMessage,
    *,
    channel: str,
    user: str,
    shared: bool,
    pictures: PictureUploads | None = None,
) -> None:
    """Ephemeral unless shared; a cut answer's full text and the picture go to the channel when
    shared, else to the user alone (an ephemeral answer has no thread to hold files)."""
    respond(response_type="in_channel" if shared else "ephemeral", **message_kwargs(message))
    with_picture = pictures is not None and pictures.wanted(message)
    if not message.cut and not with_picture:
        return
    target = channel if shared else _direct_channel(client, user)
    if target:
        if message.cut:
            upload_full_text(client, message, channel=target)
        if pictures is not None:
            pictures.send(client, message, channel=target)


def _direct_channel(client: WebClient, user: str) -> str:
    try:
        opened = client.conversations_open(users=user)
    except SlackApiError as exc:
        log.warning("could not open a direct message with %s for the full answer: %s", user, exc.response.get("error"))
        return ""
    return str((opened.get("channel") or {}).get("id", ""))


def say_in_thread(
    client: WebClient,
    message: SlackMessage,
    *,
    channel: str,
    thread_ts: str,
    pictures: PictureUploads | None = None,
) -> None:
    client.chat_postMessage(channel=channel, thread_ts=thread_ts, **message_kwargs(message))
    upload_full_text(client, message, channel=channel, thread_ts=thread_ts)
    if pictures is not None:
        pictures.send(client, message, channel=channel, thread_ts=thread_ts)

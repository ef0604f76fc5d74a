"""What follows an answer: its full text as a file and its picture, delivered off the request's thread.

The answer itself goes out on its request's thread. Its attachments go to background workers (two
for full texts, two for pictures) that let answers go first (`AnswerSlots.step_aside`): writing a
100k-entity answer's full text
holds the GIL for 60-170 ms, and written alongside the next command it doubled that command's
time. Uploads are retried like answers (`bot/slack/retrying`); an attachment that still cannot be
delivered is logged, and its answer has already gone out.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from slack_sdk import WebClient

from bot.render.png import PictureRenderer
from bot.slack.answer_slots import AnswerSlots
from bot.slack.blocks.kit import SlackMessage, file_title, unescape
from bot.slack.picture_upload import upload_picture
from bot.slack.retrying import Poster, PostFailed

log = logging.getLogger(__name__)
WORKERS = 2  # the machine's cores: `dot` and the full text are CPU work
STEP_SECONDS = 0.005  # work this long between steps aside, so an arriving answer waits at most about this
LONGEST_DEFERRAL = 5.0  # seconds an attachment yields to answers in all; then it just runs


class Attachments:
    def __init__(
        self,
        slots: AnswerSlots,
        renderer: PictureRenderer | None = None,
        *,
        workers: int = WORKERS,
        poster: Poster | None = None,
    ) -> None:
        self.slots = slots
        self.renderer = renderer
        self.poster = poster or Poster()
        # Separate queues: a full text must not wait behind earlier answers' pictures (`dot` runs
        # at a lower priority and takes longer).
        self._texts = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="attach-text")
        self._pictures = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="attach-picture")

    def wanted(self, message: SlackMessage) -> bool:
        return message.cut or self._picture_wanted(message)

    def send(
        self,
        client: WebClient,
        message: SlackMessage,
        *,
        channel: str = "",
        user: str = "",
        thread_ts: str | None = None,
    ) -> Future[None] | None:
        """Deliver in `channel` (and `thread_ts`), or to `user` alone when no channel is given."""
        if not self.wanted(message):
            return None
        return self._texts.submit(self._deliver, client, message, channel, user, thread_ts)

    def close(self) -> None:
        """Deliver what was already handed over, then stop."""
        self._texts.shutdown(wait=True)  # first: it may still hand pictures over
        self._pictures.shutdown(wait=True)

    def _picture_wanted(self, message: SlackMessage) -> bool:
        return self.renderer is not None and self.renderer.available and message.draw_picture is not None

    def _deliver(
        self, client: WebClient, message: SlackMessage, channel: str, user: str, thread_ts: str | None
    ) -> None:
        try:
            target = channel or direct_channel(client, user, self.poster)
            if not target:
                return
            if self.renderer is not None and self._picture_wanted(message):
                self._pictures.submit(self._picture, self.renderer, client, message, target, thread_ts)
            if message.cut:
                upload_full_text(client, message, channel=target, thread_ts=thread_ts, pace=Pacer(self.slots),
                                 poster=self.poster)  # fmt: skip
        except Exception:  # a worker's exception would otherwise vanish into its future
            log.exception("could not attach the full answer in %s", channel or f"a DM with {user}")

    def _picture(
        self, renderer: PictureRenderer, client: WebClient, message: SlackMessage, channel: str, thread_ts: str | None
    ) -> None:
        try:
            Pacer(self.slots)(force=True)  # drawing is CPU work too: after the answers in progress
            upload_picture(renderer, client, message, channel=channel, thread_ts=thread_ts, poster=self.poster)
        except Exception:
            log.exception("could not attach the picture in %s", channel)


class Pacer:
    """Called between small pieces of background work: every few ms of work, lets answers go first."""

    def __init__(self, slots: AnswerSlots | None) -> None:
        self.slots = slots
        self._last = self._start = time.monotonic()

    def __call__(self, *, force: bool = False) -> None:
        now = time.monotonic()
        left = self._start + LONGEST_DEFERRAL - now
        if self.slots is None or left <= 0 or not (force or now - self._last >= STEP_SECONDS):
            return
        self.slots.step_aside(left)
        self._last = time.monotonic()


def upload_full_text(
    client: WebClient,
    message: SlackMessage,
    *,
    channel: str,
    thread_ts: str | None = None,
    pace: Pacer | None = None,
    poster: Poster | None = None,
) -> None:
    if message.write_full_text is None:
        return
    full_text = _written(message.write_full_text(), pace or Pacer(None))
    if not full_text:
        return
    upload: dict[str, Any] = {"channel": channel, "thread_ts": thread_ts, "content": full_text,
                              "filename": _filename(message),
                              "title": file_title(f"Full answer: {unescape(message.text)}")}  # fmt: skip
    try:
        (poster or Poster())(lambda: client.files_upload_v2(**upload), what="full-text")
    except PostFailed as exc:
        log.warning("could not attach the full answer as a file in %s: %s", channel, exc)


def _written(pieces: Iterable[str], pace: Pacer) -> str:
    written = []
    for piece in pieces:
        pace()
        written.append(piece)
    return "".join(written)


def _filename(message: SlackMessage) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", message.text.lower()).strip("-")[:60] or "answer"
    return f"{stem}.txt"


def direct_channel(client: WebClient, user: str, poster: Poster) -> str:
    """The id of a direct message with `user`, or "" when Slack would not open one: opened through
    `poster`, retried like every other call to Slack (a failure it gives up on is logged and counted)."""
    if not user:
        return ""
    try:
        opened = poster(lambda: client.conversations_open(users=user), what="direct-message")
    except PostFailed as exc:
        log.warning("could not open a direct message with %s for the full answer: %s", user, exc)
        return ""
    return str((opened.get("channel") or {}).get("id", ""))

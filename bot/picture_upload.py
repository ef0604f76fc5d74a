"""Answers' pictures, drawn and uploaded to Slack off the request's thread.

A picture follows its message: the handler hands it over once the message is out and is done.
Two workers draw and upload, so a burst of commands starts at most two `dot` processes at a
time and no answer waits behind another answer's picture. A picture that cannot be drawn or
uploaded is logged; its answer has already gone out.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.blocks_kit import SlackMessage
from bot.picture_render import PictureRenderer

log = logging.getLogger(__name__)
WORKERS = 2  # the machine's cores: `dot` is CPU work


class PictureUploads:
    def __init__(self, renderer: PictureRenderer, *, workers: int = WORKERS) -> None:
        self.renderer = renderer
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="picture")

    def wanted(self, message: SlackMessage) -> bool:
        """True when this answer has a picture and Graphviz is here to draw it."""
        return self.renderer.available and message.draw_picture is not None

    def send(
        self, client: WebClient, message: SlackMessage, *, channel: str, thread_ts: str | None = None
    ) -> Future[None] | None:
        if not self.wanted(message):
            return None
        return self._pool.submit(self._upload, client, message, channel, thread_ts)

    def close(self) -> None:
        """Finish the pictures already handed over, then stop."""
        self._pool.shutdown(wait=True)

    def _upload(self, client: WebClient, message: SlackMessage, channel: str, thread_ts: str | None) -> None:
        try:
            self._draw_and_upload(client, message, channel, thread_ts)
        except Exception:  # a worker's exception would otherwise vanish into its future
            log.exception("could not attach the picture in %s", channel)

    def _draw_and_upload(self, client: WebClient, message: SlackMessage, channel: str, thread_ts: str | None) -> None:
        drawing = message.draw_picture() if message.draw_picture else None
        if drawing is None:
            return
        png = self.renderer.render_png(drawing.source)
        if png is None:
            return  # the renderer logged why
        try:
            client.files_upload_v2(
                channel=channel,
                thread_ts=thread_ts,
                file=png,
                filename=drawing.filename,
                title=drawing.title,
                alt_txt=drawing.title,
            )
        except SlackApiError as exc:
            log.warning("could not attach the picture in %s: %s", channel, exc.response.get("error"))
        except (SlackClientError, OSError) as exc:
            log.warning("could not attach the picture in %s: %s", channel, exc)

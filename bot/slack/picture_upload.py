"""An answer's picture: drawn (DOT), rendered by Graphviz, and uploaded next to its message.

Called by the attachment workers (`bot/slack/attachments.py`) once the message is out, so drawing never
delays an answer; a picture that cannot be drawn or uploaded is logged, and its answer stands.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackClientError

from bot.render.png import PictureRenderer
from bot.slack.blocks.kit import SlackMessage, file_title
from bot.slack.retrying import Poster, PostFailed

log = logging.getLogger(__name__)


def upload_picture(
    renderer: PictureRenderer,
    client: WebClient,
    message: SlackMessage,
    *,
    channel: str,
    thread_ts: str | None,
    poster: Poster | None = None,
) -> None:
    drawing = message.draw_picture() if message.draw_picture else None
    if drawing is None:
        return
    png = renderer.render_png(drawing.source)
    if png is None:
        return  # the renderer logged why
    upload: dict[str, Any] = {"channel": channel, "thread_ts": thread_ts, "file": png, "filename": drawing.filename,
              "title": file_title(drawing.title), "alt_txt": file_title(drawing.title, 1000)}  # fmt: skip
    try:
        (poster or Poster())(lambda: client.files_upload_v2(**upload), what="picture")
    except PostFailed as exc:
        log.warning("could not attach the picture in %s: %s", channel, exc)
    except (SlackClientError, OSError) as exc:  # the upload URL's own step, outside the Web API's errors
        log.warning("could not attach the picture in %s: %s", channel, exc)

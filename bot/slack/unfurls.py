"""A Backstage entity page pasted in a conversation unfurls to one line about the entity (`link_shared`,
then `chat.unfurl`): what breaks if it goes down, its owners, its last deploy.

An unfurl is seen by everyone in the conversation, so it follows the conversation's visibility,
never the poster's: an entity the channel may not see (or one the graph does not know) is not
unfurled at all, and a preview in the message composer, whose conversation is not known yet, sees
what an outsider sees. Links are read only under ONCALL_GRAPH_BACKSTAGE_URL
(`<base>/catalog/<namespace>/<kind>/<name>`, any page under it); every other link is left to Slack.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from slack_bolt import App
from slack_sdk import WebClient

from bot.query.glance import Glance, GlanceAnswer
from bot.query.kinds import GLANCE, Front, Question, answer
from bot.slack.blocks.glance import format_unfurl
from bot.slack.claims import delivering, take_all
from bot.slack.deps import BotDeps
from bot.slack.replies import ground
from bot.telemetry.instrument import observed_query
from graph.exposure.visibility import Viewer

log = logging.getLogger(__name__)
MAX_LINKS = 5  # Slack sends at most five links a message in one link_shared event

# The question kinds this front answers, by command name, and how each is rendered.
RENDERERS: Mapping[str, Callable[[Glance, datetime], dict[str, object]]] = {GLANCE: format_unfurl}
FRONT = Front("Slack's link unfurls", frozenset({GLANCE}), RENDERERS)


def entity_ref(url: str, base: str) -> str | None:
    """The entity ref a Backstage entity page's URL names (`component:default/payments`), or None
    for any URL that is not a page under `base`'s `/catalog/`."""
    if not base:
        return None
    try:
        page, root = urlsplit(url), urlsplit(base.rstrip("/"))
    except ValueError:
        return None
    web = page.scheme.lower() == root.scheme.lower() in ("http", "https")
    same_site = web and page.netloc.lower() == root.netloc.lower()
    prefix = f"{root.path}/catalog/"
    if not same_site or not page.path.startswith(prefix):
        return None
    parts = [unquote(part).strip().lower() for part in page.path.removeprefix(prefix).split("/")]
    if len(parts) < 3 or not all(parts[:3]):
        return None
    namespace, kind, name = parts[:3]
    return f"{kind}:{namespace}/{name}"


def on_link_shared(body: dict[str, Any], event: dict[str, Any], client: WebClient, deps: BotDeps) -> None:
    links = [link for link in event.get("links") or [] if isinstance(link, dict)][:MAX_LINKS]
    urls = [str(link.get("url") or "") for link in links]
    pages = {url: ref for url in urls if (ref := entity_ref(url, deps.backstage_url))}
    if not pages:
        return
    composer = event.get("source") == "composer"
    channel, ts = str(event.get("channel") or ""), str(event.get("message_ts") or "")
    unfurl_id = str(event.get("unfurl_id") or "")
    where = {"unfurl_id": unfurl_id, "source": "composer"} if composer else {"channel": channel, "ts": ts}
    if not all(where.values()):
        log.warning("link_shared without the message to unfurl (%s): not unfurled", ", ".join(where))
        return
    event_id = str(body.get("event_id") or "")
    keys = [f"event:{event_id}" if event_id else "", f"unfurl:{unfurl_id or channel + ':' + ts}"]
    taken, _refused = take_all(deps.claims, [key for key in keys if key])
    if taken is None:
        deps.metrics.deduplicated.labels("retry").inc()
        return
    deps.metrics.requests.labels("unfurl").inc()
    viewer = Viewer() if composer else Viewer(channel=channel)  # the conversation's, never the poster's
    with observed_query(deps.metrics, "unfurl", " ".join(pages.values())), delivering(taken):
        snapshot = deps.snapshot()
        if snapshot is None:
            return  # nothing to say yet; the link stays as Slack shows it
        now = deps.clock()
        asked: GlanceAnswer = answer(Question(GLANCE, refs=tuple(pages.values())), ground(deps, snapshot, viewer))
        found = {g.entity: g for g in asked.glances}
        render = RENDERERS[GLANCE]
        unfurls = {url: render(found[ref], now) for url, ref in pages.items() if ref in found}
        if unfurls:
            deps.poster(lambda: _unfurl(client, where, unfurls), what="unfurl")


def register(app: App, deps: BotDeps) -> None:
    app.event("link_shared")(lambda body, event, client: on_link_shared(body, event, client, deps))


def _unfurl(client: WebClient, where: Mapping[str, str], unfurls: dict[str, Any]) -> object:
    if "unfurl_id" in where:
        return client.chat_unfurl(unfurl_id=where["unfurl_id"], source=where["source"], unfurls=unfurls)
    return client.chat_unfurl(channel=where["channel"], ts=where["ts"], unfurls=unfurls)

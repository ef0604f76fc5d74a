"""The Bolt app, built by a function (nothing at import time), handlers registered explicitly."""

from __future__ import annotations

from slack_bolt import App
from slack_sdk import WebClient

from bot.slack import assistant, commands, events, home, review_actions, shortcuts, unfurls
from bot.slack.deps import BotDeps
from bot.slack.listener_pool import ListenerPool, signal_acks

# Each answer holds a listener thread while it walks and posts, and a command is only acked once
# its listener starts: size the pool for a burst of commands during an incident (bench: 50 at
# once), not Bolt's default of five.
LISTENER_THREADS = 64


def build_client(token: str, base_url: str) -> WebClient:
    """A Web API client that never retries by itself: `bot/slack/retrying` is the one layer that does
    (Retry-After honoured there), so a failed post is neither retried twice over nor lost."""
    return WebClient(token=token, base_url=base_url, retry_handlers=[])


def build_app(deps: BotDeps, *, client: WebClient, signing_secret: str) -> App:
    app = App(
        client=client,
        signing_secret=signing_secret,
        token_verification_enabled=False,  # auth.test runs on the first request instead of at import
        listener_executor=ListenerPool(max_workers=LISTENER_THREADS, thread_name_prefix="slack-listener"),
    )
    app.use(signal_acks)
    commands.register(app, deps)
    assistant.register(app, deps)  # middleware: before the catch-all message listener sees a DM
    events.register(app, deps)
    unfurls.register(app, deps)
    home.register(app, deps)
    shortcuts.register(app, deps)
    review_actions.register(app, deps)
    return app

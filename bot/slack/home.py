"""The App Home tab (`app_home_opened`, then `views.publish`): for each person, the entities their
teams own (the catalog user carrying their Slack id, `graph/ownership.py`), what depends on each and
the graph's freshness, as they may see it; for admins (ONCALL_GRAPH_ADMINS) also the sources' lag
and coverage. Published once per event (claimed by its id), through `deps.poster`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.query.glance import GlanceAnswer
from bot.query.kinds import GLANCE, Front, Question, answer
from bot.slack.blocks.freshness import format_lag
from bot.slack.blocks.home import format_home, format_loading
from bot.slack.blocks.kit import Block
from bot.slack.claims import delivering
from bot.slack.deps import BotDeps
from bot.slack.events import claim_event
from bot.slack.replies import ground
from bot.telemetry.instrument import observed_query
from graph.coverage import coverage, what_it_knows
from graph.exposure.visibility import Viewer, visible
from graph.ownership import owned_by, teams_of
from graph.relations import propagates
from graph.snapshot import Snapshot

log = logging.getLogger(__name__)
SHOWN = 20  # entities walked and shown per person: the most depended-on first

# The question kinds this front answers, by command name, and how each is rendered.
RENDERERS: Mapping[str, Callable[..., dict[str, object]]] = {GLANCE: format_home}
FRONT = Front("Slack's App Home", frozenset({GLANCE}), RENDERERS)


def on_home_opened(body: dict[str, Any], event: dict[str, Any], client: WebClient, deps: BotDeps) -> None:
    user = str(event.get("user") or "")
    if event.get("tab") != "home" or not user:
        return  # the Messages tab opens the assistant's DM: nothing to publish
    taken = claim_event(deps, body, event, "home", twin=False)
    if taken is None:
        return
    with observed_query(deps.metrics, "home", ""), delivering(taken):
        snapshot = deps.snapshot()
        with deps.work_slots:
            view = format_loading() if snapshot is None else home_view(deps, snapshot, user)
        deps.poster(lambda: client.views_publish(user_id=user, view=view), what="home")


def home_view(deps: BotDeps, snapshot: Snapshot, user: str) -> dict[str, object]:
    viewer = Viewer(user=user)  # the tab is the person's alone
    teams = visible(snapshot, teams_of(snapshot, user), viewer)
    owned = visible(snapshot, owned_by(snapshot, teams), viewer)  # a hidden entity is not even counted
    ranked = sorted(owned, key=lambda ref: (-_dependents(snapshot, ref), ref))[:SHOWN]
    now = deps.clock()
    # Already in a work slot (the whole view is CPU work): the answer takes none of its own.
    asked: GlanceAnswer = answer(
        Question(GLANCE, refs=tuple(ranked)), replace(ground(deps, snapshot, viewer), cpu=None)
    )
    return RENDERERS[GLANCE](teams, len(owned), asked, now, admin=_admin(deps, snapshot, user))


def register(app: App, deps: BotDeps) -> None:
    app.event("app_home_opened")(lambda body, event, client: on_home_opened(body, event, client, deps))


def _dependents(snapshot: Snapshot, ref: str) -> int:
    return sum(1 for e in snapshot.in_edges.get(ref, ()) if propagates(e.rel))


def _admin(deps: BotDeps, snapshot: Snapshot, user: str) -> tuple[Block, ...]:
    """The /graph-lag report's blocks, for admins only."""
    if user not in deps.admins:
        return ()
    known = what_it_knows(coverage(snapshot))
    return format_lag(deps.lag(), hygiene=deps.hygiene(snapshot), now=deps.clock(), coverage=known).blocks

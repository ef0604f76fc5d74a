"""A free-text question (`ask`, a Slack mention): the graph's answer, the model's phrasing, freshness."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from functools import cache

from bot.query.bundle import AskAnswer
from bot.query.live import LiveSource, begin, live_asked, live_sections, looked
from bot.query.model_phrasing import ModelPorts, ask_question
from bot.render.freshness import freshness_of
from graph.exposure.visibility import Viewer
from graph.health.freshness import StalePolicy
from graph.questions.ask import DEPENDENCIES, IMPACT, Answer, read_window
from graph.snapshot import Snapshot
from graph.traffic.live import NOTHING
from graph.walks.blast import BlastRadius, blast_radius
from graph.walks.suspects import Suspects, suspects


def answer_ask(
    snapshot: Snapshot,
    question: str,
    viewer: Viewer,
    now: datetime,
    policy: StalePolicy,
    model: ModelPorts | None = None,
    *,
    purpose: str = "ask",
    cpu: AbstractContextManager[object] | None = None,
    wall: datetime | None = None,
    live: LiveSource | None = None,
) -> AskAnswer:
    """`now` moves the question's time windows; `wall` (default `now`) judges freshness. With a live
    port, impact and dependency sections tell what is failing now."""
    pending = begin(live)
    asked = ask_question(snapshot, question, now=now, model=model, viewer=viewer, purpose=purpose, cpu=cpu)
    freshness = freshness_of(snapshot, wall or now, policy)
    present = looked(snapshot, pending, viewer) if live_asked(asked.answer) else NOTHING
    with cpu or nullcontext():
        answer = live_sections(snapshot, asked.answer, present, viewer, now)
    view = cache(lambda: _view(snapshot, answer, now, viewer))
    return AskAnswer(question, answer, freshness, (), asked.phrasing, asked.fallback, view, present)


def _view(snapshot: Snapshot, answer: Answer, now: datetime, viewer: Viewer) -> BlastRadius | Suspects | None:
    """What breaks (impact questions) or what it depends on (dependency questions); else nothing to draw."""
    if not answer.entities:
        return None
    ref = answer.entities[0]  # the entity `ask` answered about
    if answer.intent == IMPACT:
        return blast_radius(snapshot, ref, viewer=viewer)
    if answer.intent == DEPENDENCIES:
        return suspects(snapshot, ref, now=now, window=read_window(answer.question), viewer=viewer)
    return None

"""What the Slack handlers are given: plain values and callables, wired once in `bot/main.py`.

Handlers never reach the database, the scheduler or the environment themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from bot.model.ports import Explainer, QuestionReader
from bot.query.live import LiveSource
from bot.slack.answer_slots import AnswerSlots
from bot.slack.attachments import Attachments
from bot.slack.claims import Claims
from bot.slack.retrying import Poster
from bot.telemetry.metrics import Metrics
from graph.health.freshness import LagReport, StalePolicy
from graph.review import ProposedEdge
from graph.snapshot import Snapshot


@dataclass(frozen=True)
class BotDeps:
    snapshot: Callable[[], Snapshot | None]  # the current snapshot; read once per request
    claims: Claims  # an answer's keys, taken before it is posted and settled after, on every replica
    lag: Callable[[], LagReport]
    clock: Callable[[], datetime]
    metrics: Metrics
    admins: Collection[str] = ()
    watch_channels: Collection[str] = ()
    alert_bots: Collection[str] = ("PagerDuty",)
    stale_policy: StalePolicy = field(default_factory=StalePolicy)  # when every answer warns of a stale source
    hygiene: Callable[[Snapshot], Mapping[str, int]] = field(default=lambda _s: {})
    work_slots: AnswerSlots = field(default_factory=AnswerSlots)  # around every answer's CPU work
    # Extracted edges held for review: (how many, the first few); deciding one records the Slack user id.
    pending_reviews: Callable[[], tuple[int, Sequence[ProposedEdge]]] = field(default=lambda: (0, ()))
    decide_review: Callable[[int, str, str], ProposedEdge] | None = None  # (id, "approve"|"reject", user)
    # Full texts and pictures (PNGs, when Graphviz is installed) after their answers; None: full texts inline.
    attachments: Attachments | None = None
    # The optional model (ANTHROPIC_API_KEY): reads mentions' questions and phrases answers; None: the graph's own.
    explainer: Explainer | None = None
    reader: QuestionReader | None = None
    poster: Poster = field(default_factory=Poster)  # every post of an answer, retried until it arrives
    # What is failing now (the service graph's last minutes, open PagerDuty incidents); None: no live part.
    live: LiveSource | None = None
    # ONCALL_GRAPH_BACKSTAGE_URL: links to its entity pages are unfurled; "": none are.
    backstage_url: str = ""

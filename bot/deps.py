"""What the Slack handlers are given: plain values and callables, wired once in `bot/main.py`.

Handlers never reach the database, the scheduler or the environment themselves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from bot.explain import Explainer, QuestionReader
from bot.metrics import Metrics
from bot.picture_upload import PictureUploads
from graph.freshness import LagReport
from graph.review import ProposedEdge
from graph.snapshot import Snapshot


@dataclass(frozen=True)
class BotDeps:
    snapshot: Callable[[], Snapshot | None]  # the current snapshot; read once per request
    claim: Callable[[str], bool]  # True for the first claim of a key on any replica (exactly-once replies)
    lag: Callable[[], LagReport]
    clock: Callable[[], datetime]
    metrics: Metrics
    admins: Collection[str] = ()
    watch_channels: Collection[str] = ()
    alert_bots: Collection[str] = ("PagerDuty",)
    stale_after: float | None = None  # seconds; older graphs are called out in every answer
    hygiene: Callable[[Snapshot], Mapping[str, int]] = field(default=lambda _s: {})
    # Walking and formatting are CPU work under one GIL: a few at a time keeps the cheap acks of a
    # burst of commands prompt (bench: with 50 running at once, acks neared Slack's 3 s limit).
    work_slots: threading.BoundedSemaphore = field(default_factory=lambda: threading.BoundedSemaphore(2))
    # Extracted edges held for review: (how many, the first few); deciding one records the Slack user id.
    pending_reviews: Callable[[], tuple[int, Sequence[ProposedEdge]]] = field(default=lambda: (0, ()))
    decide_review: Callable[[int, str, str], ProposedEdge] | None = None  # (id, "approve"|"reject", user)
    pictures: PictureUploads | None = None  # answers' pictures as PNGs, drawn by Graphviz when installed
    # The optional model (ANTHROPIC_API_KEY): reads mentions' questions and phrases answers; None: the graph's own.
    explainer: Explainer | None = None
    reader: QuestionReader | None = None

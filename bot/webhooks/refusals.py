"""Deliveries a deploy webhook refused before they proved their sender: counted and remembered in
memory only, one entry per push source, never written anywhere.

A request that fails its signature or token (or is too large to check one) can be sent by anyone,
as often as they like: each costs a log line, a counter (`oncall_graph_webhook_refusals_total`,
counted by the webhook) and this entry, never a database write. /graph-lag shows what this replica
saw since it started, and says so; deliveries refused for a bad body after they proved their sender
are stored (`DeployIntake.refuse`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from graph.health.freshness import UnprovenRefusals

WHY_CHARS = 200


class Unproven:
    """`note(source, status, why)` per refusal; `seen()` per source. Thread-safe, bounded: one
    entry per push source (their names are the server's own)."""

    def __init__(self, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, UnprovenRefusals] = {}

    def note(self, source: str, status: str, why: str) -> None:
        with self._lock:
            before = self._seen.get(source)
            count = before.count + 1 if before else 1
            self._seen[source] = UnprovenRefusals(count, self._clock(), f"{status.split()[0]} {why}"[:WHY_CHARS])

    def seen(self) -> Mapping[str, UnprovenRefusals]:
        with self._lock:
            return dict(self._seen)

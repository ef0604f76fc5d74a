"""The port that hears how each sync went (per source: outcome and duration; the graph's size; how
each snapshot was brought up: a deploy delta, a rebuild or an image),
and its do-nothing default. The bot implements it with metrics and trace spans; sync never imports bot.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Protocol


class SyncObserver(Protocol):
    def syncing(self) -> AbstractContextManager[object]:
        """Entered around one sync run (the bot opens a trace span here)."""
        ...

    def source_synced(self, source: str, outcome: str, seconds: float, error: str) -> None:
        """One source read: outcome is applied, unchanged, failed or held."""
        ...

    def graph_built(self, entities: int, edges: int, retired_edges: int) -> None:
        """The snapshot now served, and the edge facts retired over the stored history."""
        ...

    def snapshot_updated(self, how: str, seconds: float) -> None:
        """The snapshot brought to the stored graph version: how is delta, rebuild or image."""
        ...


class NoObserver:
    """The observer of `oncall-graph sync` and of tests: hears everything, does nothing."""

    def syncing(self) -> AbstractContextManager[object]:
        return nullcontext()

    def source_synced(self, source: str, outcome: str, seconds: float, error: str) -> None:
        return None

    def graph_built(self, entities: int, edges: int, retired_edges: int) -> None:
        return None

    def snapshot_updated(self, how: str, seconds: float) -> None:
        return None

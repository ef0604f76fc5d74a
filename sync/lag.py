"""The port that hears when a source turns stale, failing or held, or recovers, and its log-only implementation."""

from __future__ import annotations

import logging
from typing import Protocol

from graph.health.freshness import LagTransition

log = logging.getLogger(__name__)


class LagNotifier(Protocol):
    def notify(self, transition: LagTransition) -> None: ...


class LogNotifier:
    """The notifier until the Slack bot provides one: a warning line per transition."""

    def notify(self, transition: LagTransition) -> None:
        lag = transition.lag
        if transition.stale:
            age = "never synced" if lag.age_seconds is None else f"{lag.age_seconds:.0f} s since last applied change"
            log.warning(
                "source %s is stale (%s): %s; last error: %s; held: %s",
                lag.name, lag.state, age, lag.last_error or "none", lag.held_reason or "no",
            )  # fmt: skip
        else:
            log.warning("source %s recovered", lag.name)

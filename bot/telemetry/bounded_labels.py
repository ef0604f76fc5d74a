"""Label values from what people type, with a ceiling on how many distinct ones a metric gets.

Every distinct label value is a time series held in this process and in Prometheus forever after.
A name typed into Slack is unbounded input (typos, pasted sentences, someone testing the bot with
random text), so labelling by it verbatim would let users grow both without limit. We canonicalize
first (so "Auth Service", "auth-service" and "the auth svc" count as one, the form an alias would
take anyway), cut long text, and give only the first `limit` distinct names their own label; every
later newcomer counts under OTHER. The early misses of a process are the common ones, and a
restart starts the allowance afresh.
"""

from __future__ import annotations

import threading

from graph.naming.names import canonical

OTHER = "other"
EMPTY = "(empty)"
DEFAULT_LIMIT = 100
MAX_LENGTH = 64


class BoundedLabels:
    """`label(text)` -> its canonical form while fewer than `limit` are known, else OTHER. Thread-safe."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def label(self, text: str) -> str:
        value = canonical(text)[:MAX_LENGTH].strip() or EMPTY
        with self._lock:
            if value in self._known:
                return value
            if len(self._known) < self.limit and value != OTHER:
                self._known.add(value)
                return value
        return OTHER

"""Names that resolved to no entity, for whoever grows the catalog's aliases: in the log, not in metrics.

A name is what someone typed into Slack: unbounded input, and sometimes the name of an entity
hidden from them. As a metric label each distinct one would be a time series kept forever, served
on an unauthenticated /metrics; so the metrics count misses by command only, and the names go to
the log, at most `per_minute` lines a minute, in the canonical form an alias would take, cut short.
The misses a minute's allowance leaves out are counted on the next line that is written.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from graph.naming.names import canonical

log = logging.getLogger(__name__)
PER_MINUTE = 20
NAME_CHARS = 64


class UnresolvedNames:
    """`note(command, name)`: one log line per unresolved name, within the rate. Thread-safe."""

    def __init__(self, *, per_minute: int = PER_MINUTE, clock: Callable[[], float] = time.monotonic) -> None:
        self._per_minute, self._clock = per_minute, clock
        self._lock = threading.Lock()
        self._window = float("-inf")
        self._written = self._left_out = 0

    def note(self, command: str, name: str) -> None:
        with self._lock:
            now = self._clock()
            if now - self._window >= 60:
                self._window, self._written = now, 0
            if self._written >= self._per_minute:
                self._left_out += 1
                return
            self._written += 1
            left_out, self._left_out = self._left_out, 0
        alias = canonical(name)[:NAME_CHARS].strip()
        more = f" ({left_out} more not logged: over {self._per_minute} a minute)" if left_out else ""
        log.info(
            "unresolved name in %s: %r%s", command, alias, more,
            extra={"command": command, "unresolved": alias, "not_logged": left_out},
        )  # fmt: skip

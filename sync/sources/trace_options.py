"""How trace sources are read: the window calls are counted over, the noise floor, and the
service graph's metric prefix and tenant. One value, from the settings, for every trace source."""

from __future__ import annotations

import re
from dataclasses import dataclass

DAY = 86_400
METRIC_PREFIX = "traces_service_graph"  # Tempo's, Alloy's and the Collector's servicegraph metrics
_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3_600, "d": DAY, "w": 7 * DAY}
_WINDOW = re.compile(r"^\s*(\d+)\s*(s|m|min|h|d|w)?\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class TraceOptions:
    window_seconds: int = 7 * DAY  # ONCALL_GRAPH_OBSERVED_WINDOW
    min_calls: int = 10  # ONCALL_GRAPH_OBSERVED_MIN_CALLS: fewer calls over the window is noise
    metric_prefix: str = METRIC_PREFIX  # ONCALL_GRAPH_SERVICE_GRAPH_PREFIX
    tenant: str = ""  # ONCALL_GRAPH_SERVICE_GRAPH_TENANT, sent as X-Scope-OrgID (Mimir, Cortex, Tempo)

    @property
    def version(self) -> str:
        """Appended to a trace file's content version: the same files read another way are read again."""
        return f"+traces:{self.window_seconds}:{self.min_calls}"


def window_seconds(text: str) -> int:
    """`7d`, `12h`, `30m`, `90s`, `2w` or plain seconds; raises ValueError naming what it expected."""
    found = _WINDOW.match(text)
    if not found or int(found.group(1)) == 0:
        raise ValueError(f"not a window: {text!r} (expected a number with s, m, h, d or w, e.g. 7d)")
    return int(found.group(1)) * _UNITS[(found.group(2) or "s").lower()]

"""Deploy events pushed in (webhooks): parsed by the feed's own reader, stored as facts of their
push source (with the version step they make, in one transaction), and then this replica's
snapshot refreshed in the background; it reads the stored step back as a deploy delta, as every
other replica does when it follows the graph version.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from graph.facts import Problem
from sync.group_commit import GroupCommit
from sync.pacing import FOLLOW_GAP, Pace
from sync.sources.deploys import parse_deploys
from sync.store.fact_store import PUSHED, Store
from sync.store.pushed import Delivery, Stored, record_refused, store_deliveries

log = logging.getLogger(__name__)
Clock = Callable[[], datetime]

# endpoint -> (source name, where its events come in)
ENDPOINTS = {
    "github": ("webhook:github", "POST /webhooks/github"),
    "deploys": ("webhook:deploys", "POST /webhooks/deploys"),
}


@dataclass(frozen=True, slots=True)
class PushOutcome:
    stored: tuple[str, ...] = ()  # deploy ids stored by this delivery
    repeated: tuple[str, ...] = ()  # deploy ids some earlier delivery stored: nothing new
    errors: tuple[str, ...] = ()  # why the body was refused, each naming its field; then nothing is stored
    warnings: tuple[str, ...] = ()
    version: int = 0


class RefreshWorker:
    """Runs `refresh` in one background thread after each `poke`; pokes during a run, or within
    `gap` of its start, fold into one more run."""

    def __init__(self, refresh: Callable[[], None], *, gap: float = FOLLOW_GAP) -> None:
        self._refresh, self._pace = refresh, Pace(gap)
        self._wanted = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="push-refresh", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        self._wanted.set()

    def close(self) -> None:
        self._stopping = True
        self._wanted.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._pace.wait()
            self._wanted.clear()
            if self._stopping:
                return
            try:
                self._refresh()
            except Exception:
                log.exception("refreshing the graph after a pushed deploy failed; the next sync or push retries")


class PushIntake:
    """The port `bot.webhooks` posts into; one per process."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        refresh: Callable[[], None] | None,
        replica: str = "",
    ) -> None:
        """`refresh` runs in the background after each delivery that stored something; None when
        something else already follows every version move (the version watcher)."""
        self._store, self._clock, self._replica = store, clock, replica
        self._worker = RefreshWorker(refresh) if refresh is not None else None
        # Per push source: a burst of deliveries is stored a transaction and a version step at a time.
        self._writers = {source: GroupCommit(self._writer_for(source)) for source, _ in ENDPOINTS.values()}

    def _writer_for(self, source: str) -> Callable[[Sequence[Delivery]], list[Stored]]:
        return lambda batch: store_deliveries(self._store, source, batch, replica=self._replica)

    def open(self, endpoint: str) -> str:
        """Register the endpoint's push source (so lag lists it before its first event); its name."""
        name, location = ENDPOINTS[endpoint]
        self._store.ensure_source(name, PUSHED, location)
        return name

    def accept(self, endpoint: str, text: str, *, delivery: str = "") -> PushOutcome:
        """Parse and store one delivery: all its deploys, or, when any part is bad, none of them."""
        source, _ = ENDPOINTS[endpoint]
        at = self._clock()
        label = f"{endpoint} delivery {delivery}" if delivery else f"{endpoint} push at {at.isoformat()}"
        facts = parse_deploys(source, label, text)
        errors = tuple(_field_first(p) for p in facts.problems if p.severity == "error")
        warnings = tuple(_field_first(p) for p in facts.problems if p.severity != "error")
        if errors:
            self.refuse(endpoint, "; ".join(errors))
            return PushOutcome(errors=errors, warnings=warnings)
        if not facts.deploys:
            return PushOutcome(warnings=warnings)  # e.g. a status that is not `success`: nothing to store
        stored: Stored = self._writers[source].submit(Delivery(facts.deploys, at, delivery))
        if stored.added:
            log.info("stored %d pushed deploys from %s (graph version %s)", len(stored.added), label, stored.version)
            if self._worker is not None:
                self._worker.poke()
        return PushOutcome(stored.added, stored.repeated, (), warnings, stored.version)

    def refuse(self, endpoint: str, why: str) -> None:
        source, _ = ENDPOINTS[endpoint]
        try:
            record_refused(self._store, source, at=self._clock(), why=why)
        except Exception:  # the refusal is answered whether or not it is recorded
            log.exception("recording a refused delivery of %s failed", source)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


def _field_first(problem: Problem) -> str:
    """`field deployment_status.state: no state ... (github delivery 1a2b:1)`: the field leads."""
    if problem.field:
        return f"field {problem.field}: {problem.message} ({problem.where})"
    return f"{problem.message} ({problem.where})"

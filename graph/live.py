"""The present beside the prediction: which calls along an answer's paths are failing now. Pure.

A live reading is what a service-graph source answered at answer time about the last few minutes:
per (client, server) telemetry names, the calls and the failed calls. This module maps the names
to entities as the graph does (`graph.observed.ServiceNames`) and marks an impacted entity (or a
dependency) by the calls of its own hop: `checkout: 12% of calls to cart failing (last 5 min)`.
Open incidents are marked the same way, by the entity their PagerDuty service maps to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING

from graph.build import PAGERDUTY_ANNOTATION
from graph.naming.refs import short_name
from graph.observed import ServiceNames, window_text

if TYPE_CHECKING:
    from graph.edges import EdgeFacts
    from graph.snapshot import Snapshot

# A hop is failing now when at least this share of its calls failed over the live window: below it
# is the background error rate every busy service has, and marking it would cry wolf.
FAILING_SHARE = 0.01
_NAMES = f"{__name__}.names"  # this module's keys in `Snapshot.derived`
_SERVICES = f"{__name__}.pagerduty"


@dataclass(frozen=True, slots=True)
class LiveCall:
    """Calls between two telemetry names over the live window."""

    client: str
    server: str
    calls: int
    failed: int


@dataclass(frozen=True, slots=True)
class LiveReading:
    """One answer's look at the present: where from, when, over what window, and what it saw.

    `error` says why there is nothing to show (a timeout, an error answer, no data): the answer
    then comes without the live part and says so in one line."""

    source: str  # as people read it: `prometheus:9090`
    at: datetime | None
    window_seconds: int
    calls: tuple[LiveCall, ...] = ()
    error: str = ""

    @property
    def window(self) -> str:
        return window_text(self.window_seconds)


@dataclass(frozen=True, slots=True)
class Incident:
    """An open PagerDuty incident on a service that maps to an entity."""

    number: int
    title: str
    url: str
    status: str  # triggered | acknowledged
    service_id: str
    entity: str = ""


@dataclass(frozen=True, slots=True)
class LiveMark:
    """How one hop is doing now: its calls, the share failing, and whether that counts as failing."""

    edge: EdgeFacts
    calls: int
    failed: int
    at: datetime | None

    @property
    def failed_share(self) -> float:
        return self.failed / self.calls if self.calls else 0.0

    @property
    def failing(self) -> bool:
        return self.calls > 0 and self.failed_share >= FAILING_SHARE

    def sentence(self, window: str) -> str:
        """`checkout: 12% of calls to cart failing (last 5 min)`, or not failing yet."""
        caller, callee = short_name(self.edge.src), short_name(self.edge.dst)
        if self.failing:
            return f"{caller}: {self.failed_share:.0%} of calls to {callee} failing (last {window})"
        return f"{caller}: calls to {callee} not failing yet (last {window})"


@dataclass(frozen=True, slots=True)
class Present:
    """Everything live an answer knows: the reading's hops by entity refs, and open incidents."""

    reading: LiveReading | None
    hops: Mapping[tuple[str, str], tuple[int, int]]  # (src ref, dst ref) -> (calls, failed)
    incidents: Mapping[str, tuple[Incident, ...]]  # entity ref -> its open incidents
    incidents_error: str = ""

    def mark(self, edges: Sequence[EdgeFacts]) -> LiveMark | None:
        """The mark of an entity's own hop (the last edge of its path), when the reading saw it."""
        if not edges or self.reading is None or self.reading.error:
            return None
        hop = edges[-1]
        counted = self.hops.get((hop.src, hop.dst))
        if counted is None:
            return None
        return LiveMark(hop, counted[0], counted[1], self.reading.at)

    def open_incidents(self, ref: str) -> tuple[Incident, ...]:
        return self.incidents.get(ref, ())


NOTHING = Present(None, {}, {})


def present(
    snapshot: Snapshot, reading: LiveReading | None, incidents: Sequence[Incident] = (), *, incidents_error: str = ""
) -> Present:
    """The live reading's calls by entity refs (names no entity answers to are left out), and the
    open incidents by the entity their PagerDuty service maps to (`pagerduty.com/service-id`)."""
    hops: dict[tuple[str, str], tuple[int, int]] = {}
    if reading is not None and not reading.error:
        names = _service_names(snapshot)
        for call in reading.calls:
            src, dst = names.ref(call.client), names.ref(call.server)
            if src is None or dst is None or src == dst:
                continue
            calls, failed = hops.get((src, dst), (0, 0))
            hops[(src, dst)] = (calls + call.calls, failed + call.failed)
    by_entity: dict[str, list[Incident]] = {}
    services = pagerduty_services(snapshot)
    for incident in incidents:
        ref = incident.entity or services.get(incident.service_id, "")
        if ref:
            by_entity.setdefault(ref, []).append(incident)
    opened = {ref: tuple(sorted(found, key=lambda i: -i.number)) for ref, found in by_entity.items()}
    return Present(reading, hops, opened, incidents_error)


def pagerduty_services(snapshot: Snapshot) -> Mapping[str, str]:
    """PagerDuty service id -> the one entity that carries it (`pagerduty.com/service-id`)."""
    found: Mapping[str, str] | None = snapshot.derived.get(_SERVICES)
    if found is None:
        claimed: dict[str, set[str]] = {}
        for ref, entity in snapshot.entities.items():
            if service := entity.annotations.get(PAGERDUTY_ANNOTATION, "").strip():
                claimed.setdefault(service, set()).add(ref)
        found = snapshot.derived[_SERVICES] = MappingProxyType(
            {service: next(iter(refs)) for service, refs in claimed.items() if len(refs) == 1}
        )
    return found


def _service_names(snapshot: Snapshot) -> ServiceNames:
    names: ServiceNames | None = snapshot.derived.get(_NAMES)
    if names is None:
        names = snapshot.derived[_NAMES] = ServiceNames(snapshot.entities, snapshot.aliases)
    return names

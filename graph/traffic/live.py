"""The present beside the prediction: which calls along an answer's paths are failing now. Pure.

A live reading is what a service-graph source answered at answer time about the last few minutes:
per (client, server) telemetry names, the calls and the failed calls. This module maps the names
to entities as the graph does (`graph.observed.ServiceNames`) and marks an impacted entity (or a
dependency) by the calls of its own hop: `checkout: 12% of calls to cart failing (last 5 min)`.
Open incidents are marked the same way, by the entity their PagerDuty service maps to.

Beside a blast radius (`LiveBlast`) the impacted entities failing now, then those with an open
incident, come first; beside suspects (`live_suspects`) the dependencies failing now rank first and
a deploy of one says so in its reason. Only entities the walk shows are marked: a hop whose other
end is hidden from the viewer was dropped from the path, so it marks nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

from graph.build import PAGERDUTY_ANNOTATION
from graph.exposure.redaction import redact_text
from graph.naming.refs import short_name
from graph.observed import VIRTUAL_CLIENTS, ServiceNames, window_text
from graph.walks.blast import BREAKS

if TYPE_CHECKING:
    from graph.edges import EdgeFacts
    from graph.exposure.visibility import Viewer
    from graph.snapshot import Snapshot
    from graph.walks.blast import BlastRadius, Impact
    from graph.walks.suspects import Dependency, Suspects

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

    def said(self) -> str:
        """`live: prometheus:9090 at 03:12:05 UTC (last 5 min)`, or why there is none."""
        if self.error or self.at is None:
            return f"live data missing: {self.source}: {self.error or 'no answer'}"
        return f"live: {self.source} at {self.at.astimezone(UTC):%H:%M:%S} UTC (last {self.window})"


@dataclass(frozen=True, slots=True)
class Incident:
    """An open PagerDuty incident on a service that maps to an entity."""

    number: int
    title: str
    url: str
    status: str  # triggered | acknowledged
    service_id: str
    entity: str = ""

    def said(self) -> str:
        """`#42 cart 5xx (triggered)`: what a line names, its link beside it where the front can."""
        return f"#{self.number} {self.title} ({self.status})"


@dataclass(frozen=True, slots=True)
class LiveNow:
    """What the live port saw for one answer: the reading (None: no service-graph source configured)
    and the open incidents (`incidents_from` empty: no PagerDuty token, none asked for)."""

    reading: LiveReading | None = None
    incidents: tuple[Incident, ...] = ()
    incidents_from: str = ""  # as people read it: `api.pagerduty.com`
    incidents_error: str = ""


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
        return _failing(self.calls, self.failed)

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
    incidents_from: str = ""  # empty: no incidents asked for

    @property
    def configured(self) -> bool:
        """Whether the answer has a live part at all (a service-graph source, a PagerDuty token)."""
        return self.reading is not None or bool(self.incidents_from)

    @property
    def window(self) -> str:
        """`5 min`: the live window, as a mark's sentence says it."""
        return self.reading.window if self.reading is not None else ""

    @property
    def missing(self) -> bool:
        """Whether a live part that was asked for did not come: the answer says so in one line."""
        reading = self.reading is not None and bool(self.reading.error)
        return reading or bool(self.incidents_from and self.incidents_error)

    def said(self) -> str:
        """The one line citing the live part (`live: prometheus:9090 at 03:12:05 UTC (last 5 min) ·
        open incidents: api.pagerduty.com`), or saying what is missing; empty when none is configured."""
        parts = [self.reading.said()] if self.reading is not None else []
        if self.incidents_from and self.incidents_error:
            parts.append(f"open incidents missing: {self.incidents_from}: {self.incidents_error}")
        elif self.incidents_from:
            parts.append(f"open incidents: {self.incidents_from}")
        return " · ".join(parts)

    def mark(self, edges: Sequence[EdgeFacts], entity: str = "") -> LiveMark | None:
        """The mark of an entity's own hop (the last edge of its path), when the reading saw it.

        With `entity`, the hop must touch it: a path whose last hop was redacted away (its other end
        hidden from the viewer) ends on an earlier hop, which is another entity's."""
        if not edges or self.reading is None or self.reading.error:
            return None
        hop = edges[-1]
        if entity and entity not in (hop.src, hop.dst):
            return None
        counted = self.hops.get((hop.src, hop.dst))
        if counted is None:
            return None
        return LiveMark(hop, counted[0], counted[1], self.reading.at)

    def open_incidents(self, ref: str) -> tuple[Incident, ...]:
        return self.incidents.get(ref, ())

    def for_viewer(self, snapshot: Snapshot, viewer: Viewer) -> Present:
        """The present as this viewer may read it: an incident title naming a hidden entity is
        replaced whole (hidden entities' own incidents are never shown: no entry of theirs is)."""
        if not self.incidents or viewer.everything:
            return self
        shown = {
            ref: tuple(replace(i, title=redact_text(snapshot, i.title, viewer)) for i in found)
            for ref, found in self.incidents.items()
        }
        return replace(self, incidents=MappingProxyType(shown))


NOTHING = Present(None, {}, {})


def present(
    snapshot: Snapshot,
    reading: LiveReading | None,
    incidents: Sequence[Incident] = (),
    *,
    incidents_error: str = "",
    incidents_from: str = "",
) -> Present:
    """The live reading's calls by entity refs (names no entity answers to, and traffic from outside,
    are left out), and the open incidents by the entity their PagerDuty service maps to
    (`pagerduty.com/service-id`)."""
    hops = _hops(snapshot, reading) if reading is not None and not reading.error else {}
    by_entity: dict[str, list[Incident]] = {}
    services = pagerduty_services(snapshot)
    for incident in incidents:
        ref = incident.entity or services.get(incident.service_id, "")
        if ref:
            by_entity.setdefault(ref, []).append(incident)
    opened = {ref: tuple(sorted(found, key=lambda i: -i.number)) for ref, found in by_entity.items()}
    return Present(reading, hops, opened, incidents_error, incidents_from)


def present_of(snapshot: Snapshot, now: LiveNow) -> Present:
    """`present` of what the live port saw."""
    return present(
        snapshot, now.reading, now.incidents, incidents_error=now.incidents_error, incidents_from=now.incidents_from
    )


@dataclass(frozen=True, eq=False)
class LiveBlast:
    """A blast radius beside the present: the impacted entities whose own hop is failing now come
    first (most failing first), then those with an open incident, then the rest nearest first."""

    result: BlastRadius
    present: Present

    @cached_property
    def now(self) -> tuple[Impact, ...]:
        """The impacted entities failing now or with an open incident, as this viewer may see them."""
        failing = {src for (src, _), (calls, failed) in self.present.hops.items() if _failing(calls, failed)}
        found = []
        for ref, impact in sorted(self.result.impacts_of(failing | set(self.present.incidents)).items()):
            mark = self.mark(impact)
            if (mark is not None and mark.failing) or self.present.open_incidents(ref):
                found.append((impact, mark))
        found.sort(key=lambda f: (-f[1].failed_share if f[1] and f[1].failing else 1.0, f[0].hops, f[0].entity))
        return tuple(impact for impact, _ in found)

    @cached_property
    def now_refs(self) -> frozenset[str]:
        return frozenset(impact.entity for impact in self.now)

    @cached_property
    def not_yet(self) -> tuple[Impact, ...]:
        """The impacted entities predicted to break whose own hop was seen calling without failing, nearest first."""
        calm = {src for (src, _), (calls, failed) in self.present.hops.items() if calls and not _failing(calls, failed)}
        found = []
        for impact in self.result.impacts_of(calm).values():
            mark = self.mark(impact) if impact.impact == BREAKS else None
            if mark is not None and not mark.failing:
                found.append(impact)
        return tuple(sorted(found, key=lambda i: (i.hops, i.entity)))

    @cached_property
    def failing(self) -> int:
        """How many impacted entities are failing now: the header's "· 3 already failing"."""
        return sum(1 for impact in self.now if (mark := self.mark(impact)) is not None and mark.failing)

    def first(self, limit: int) -> tuple[Impact, ...]:
        return tuple(self.iter_first(limit))

    def iter_first(self, limit: int) -> Iterator[Impact]:
        """The first `limit` entries in the order an answer lists them: `now`, then `nearest` without them."""
        yield from self.now[:limit]
        shown = min(limit, len(self.now))
        listed = self.now_refs
        for impact in self.result.iter_nearest(limit - shown + len(listed)):
            if shown >= limit:
                return
            if impact.entity not in listed:
                shown += 1
                yield impact

    def mark(self, impact: Impact) -> LiveMark | None:
        return self.present.mark(impact.edges, impact.entity)

    def incidents(self, impact: Impact) -> tuple[Incident, ...]:
        return self.present.open_incidents(impact.entity)


def live_suspects(result: Suspects, now: Present) -> Suspects:
    """Dependencies failing now first (most failing first), then those with an open incident, then the
    rest in their order; a deploy of one of them says so in its reason."""
    if not now.hops and not now.incidents:
        return result
    ranked: list[tuple[tuple[float, int], Dependency]] = []
    for place, dep in enumerate(result.dependencies):
        mark = now.mark(dep.edges, dep.entity)
        opened = now.open_incidents(dep.entity)
        rank = -mark.failed_share if mark is not None and mark.failing else 1.0 if opened else 2.0
        why = _why_now(mark, opened)
        if why:
            dep = replace(dep, deploys=tuple(replace(s, reason=f"{s.reason}, {why}") for s in dep.deploys))
        ranked.append(((rank, place), dep))
    ranked.sort(key=lambda r: r[0])
    return replace(result, dependencies=tuple(dep for _, dep in ranked))


def _why_now(mark: LiveMark | None, opened: Sequence[Incident]) -> str:
    """What a suspect deploy's reason adds when its dependency is failing now or has an open incident."""
    parts = []
    if mark is not None and mark.failing:
        parts.append(f"failing now ({mark.failed_share:.0%} of calls from {short_name(mark.edge.src)} failed)")
    if opened:
        parts.append(f"open incident #{opened[0].number}")
    return " and ".join(parts)


def _failing(calls: int, failed: int) -> bool:
    return calls > 0 and failed / calls >= FAILING_SHARE


def live_indexes(snapshot: Snapshot) -> None:
    """Built before a snapshot serves (`graph.warm`): a first answer adding them to `derived` while
    the snapshot image is pickled would fail the image's write."""
    _service_names(snapshot)
    pagerduty_services(snapshot)


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


def _hops(snapshot: Snapshot, reading: LiveReading) -> dict[tuple[str, str], tuple[int, int]]:
    """The reading's calls by (src, dst) entity refs: mapped per answer, never kept in the snapshot,
    whose derived indexes depend on its facts alone."""
    hops: dict[tuple[str, str], tuple[int, int]] = {}
    names = _service_names(snapshot)
    for call in reading.calls:
        if call.client.strip().lower() in VIRTUAL_CLIENTS:
            continue
        src, dst = names.ref(call.client), names.ref(call.server)
        if src is None or dst is None or src == dst:
            continue
        calls, failed = hops.get((src, dst), (0, 0))
        hops[(src, dst)] = (calls + call.calls, failed + call.failed)
    return hops


def _service_names(snapshot: Snapshot) -> ServiceNames:
    names: ServiceNames | None = snapshot.derived.get(_NAMES)
    if names is None:
        names = snapshot.derived[_NAMES] = ServiceNames(snapshot.entities, snapshot.aliases)
    return names

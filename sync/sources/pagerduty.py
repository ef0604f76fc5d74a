"""PagerDuty service dependencies (REST API v2), walked from seed services into `depends_on` facts.

`fetch_pagerduty` walks the graph one request at a time (PagerDuty rate-limits per account) and
raises only when the API cannot be used at all: refused token, endless rate limiting, not JSON.
`parse_pagerduty` is pure: each relationship becomes an assertion between PagerDuty service ids,
which the build resolves through the `pagerduty.com/service-id` annotation of catalog entities.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import MappingProxyType
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

import httpx

from graph.facts import AliasClaim, Assertion, Citation, Problem, SourceFacts
from graph.relations import DEPENDS_ON
from sync.sources.reading.shown import shown
from sync.sources.reading.textfiles import FetchError, display_name

DEFAULT_BASE_URL = "https://api.pagerduty.com"
ACCEPT = "application/vnd.pagerduty+json;version=2"
MAX_DEPTH = 100  # PagerDuty's own limit on the depth of a dependency graph
PAGE_SIZE = 100  # the largest `limit` classic pagination accepts
RETRIES = 3
MAX_WAIT = 60.0  # seconds; a longer Retry-After is cut short and simply retried again
TECHNICAL = "technical"
BUSINESS = "business"
# Responses say `*_reference`; request bodies say `service`/`business_service`; both mean the same.
_TYPES = {
    "technical_service_reference": TECHNICAL,
    "service_reference": TECHNICAL,
    "service": TECHNICAL,
    "business_service_reference": BUSINESS,
    "business_service": BUSINESS,
}
_DEPENDENCIES = {
    TECHNICAL: "/service_dependencies/technical_services/",
    BUSINESS: "/service_dependencies/business_services/",
}
_OBJECTS = {TECHNICAL: ("/services", "service"), BUSINESS: ("/business_services", "business_service")}
_RETRIED = frozenset({429, 500, 502, 503, 504})
_REFUSED = frozenset({400, 402, 404})
Sleep = Callable[[float], None]


class PagerDutyError(FetchError):
    """The PagerDuty API could not be used at all: refused token, rate limited for good, not JSON."""


class _RefusedError(Exception):
    """One object was refused (404 gone, 400 over a limit, 402 not in the plan)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}{f': {detail}' if detail else ''}")
        self.status = status


@dataclass(frozen=True, slots=True)
class PagerDutyLocation:
    """The API base URL and the seed services; no seeds means every service in the account."""

    base_url: str
    services: tuple[str, ...] = ()
    business_services: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ServiceRef:
    id: str
    kind: str  # TECHNICAL or BUSINESS


@dataclass(frozen=True, slots=True)
class Relationship:
    """`dependent` uses `supporting`: when the supporting service fails, the dependent does."""

    id: str
    supporting: ServiceRef
    dependent: ServiceRef


@dataclass(frozen=True, slots=True)
class ServiceGraph:
    """What a walk found: each relationship once, the services' names, and what went wrong."""

    name: str
    relationships: tuple[Relationship, ...] = ()
    names: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    problems: tuple[Problem, ...] = ()
    pages: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # id -> its `html_url`


def read_pagerduty(source: str, location: str, *, token: str, timeout: float = 10.0) -> SourceFacts:
    """Walk and parse one PagerDuty account; raises PagerDutyError only when the API is unusable."""
    return parse_pagerduty(source, fetch_pagerduty(location, token=token, timeout=timeout))


def parse_pagerduty(source: str, graph: ServiceGraph) -> SourceFacts:
    """One by-name `depends_on` per relationship (ids at both ends), one alias per service name; a
    relationship cites the dependent service's page, where PagerDuty lists what it depends on."""
    pages = graph.pages
    assertions = tuple(
        Assertion(
            r.dependent.id,
            DEPENDS_ON,
            r.supporting.id,
            _citation(source, r.id, pages.get(r.dependent.id)),
            by_name=True,
        )
        for r in graph.relationships
    )
    aliases = tuple(
        AliasClaim(name.strip(), sid, _citation(source, sid, pages.get(sid)), target_is_name=True)
        for sid, name in graph.names.items()
        if name.strip() and name.strip().casefold() != sid.casefold()
    )
    return SourceFacts(source, assertions=assertions, aliases=aliases, problems=graph.problems)


def _citation(source: str, object_id: str, page: str | None) -> Citation:
    return Citation(source, f"pagerduty:{object_id}", origin=f"pagerduty:{object_id}", url=page or "")


def parse_location(location: str) -> PagerDutyLocation:
    """`[base URL][?services=P1,P2&business_services=P3]`; raises ValueError for anything else."""
    parts = urlsplit(location.strip())
    if parts.scheme in ("http", "https") and parts.netloc:
        base = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    elif not (parts.scheme or parts.netloc or parts.path):
        base = DEFAULT_BASE_URL
    else:
        raise ValueError(f"PagerDuty location {shown(display_name(location))} is not an http(s) base URL")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"services", "business_services"})
    if unknown:
        raise ValueError(
            f"PagerDuty location: unknown parameter {shown(unknown[0])}; use services= or business_services="
        )
    seeds = {key: tuple(i.strip() for v in values for i in v.split(",") if i.strip()) for key, values in query.items()}
    if any(not ids for ids in seeds.values()):
        raise ValueError("PagerDuty location: services= or business_services= names no service id")
    return PagerDutyLocation(base, seeds.get("services", ()), seeds.get("business_services", ()))


def parse_relationships(where: str, body: object) -> tuple[tuple[Relationship, ...], tuple[Problem, ...]]:
    """The relationships of one dependencies answer; each bad entry is a problem, the rest are kept."""
    items = body.get("relationships") if isinstance(body, Mapping) else None
    if not isinstance(items, list):
        return (), (Problem(where, "expected an object with a relationships array", "relationships", "error"),)
    found: list[Relationship] = []
    problems: list[Problem] = []
    for index, item in enumerate(items):
        relationship = _relationship(where, index, item, problems)
        if relationship is not None:
            found.append(relationship)
    return tuple(found), tuple(problems)


def _relationship(where: str, index: int, item: object, problems: list[Problem]) -> Relationship | None:
    if not isinstance(item, Mapping):
        problems.append(Problem(where, "not an object", f"relationships[{index}]", "error"))
        return None
    rid = item.get("id")
    place = f"pagerduty:{rid.strip()}" if isinstance(rid, str) and rid.strip() else f"{where} relationships[{index}]"
    supporting = _service(place, item.get("supporting_service"), "supporting_service", problems)
    dependent = _service(place, item.get("dependent_service"), "dependent_service", problems)
    if supporting is None or dependent is None:
        return None
    if not place.startswith("pagerduty:"):
        problems.append(Problem(place, "no relationship id; cited by its two services", "id"))
        return Relationship(f"{dependent.id}>{supporting.id}", supporting, dependent)
    return Relationship(place.removeprefix("pagerduty:"), supporting, dependent)


def _service(place: str, value: object, key: str, problems: list[Problem]) -> ServiceRef | None:
    sid = value.get("id") if isinstance(value, Mapping) else None
    if not isinstance(sid, str) or not sid.strip():
        problems.append(Problem(place, "missing, or a service reference without an id", f"{key}.id", "error"))
        return None
    raw = value.get("type") if isinstance(value, Mapping) else None
    kind = _TYPES.get(raw) if isinstance(raw, str) else None
    if kind is None:
        message = f"unknown reference type {shown(raw)}; {sid.strip()} is read as a technical service"
        problems.append(Problem(place, message, f"{key}.type"))
    return ServiceRef(sid.strip(), kind or TECHNICAL)


def fetch_pagerduty(location: str, *, token: str, timeout: float = 10.0, sleep: Sleep = time.sleep) -> ServiceGraph:
    """Walk the dependency graph breadth-first from the seeds, serially, each service once.

    Raises PagerDutyError when the token is refused, an answer is not JSON, or the API keeps
    failing; a missing service or one over PagerDuty's limits is a problem and the walk goes on.
    """
    if not token.strip():
        raise PagerDutyError("no PagerDuty API token: the service dependencies cannot be read")
    where = parse_location(location)
    headers = {"Accept": ACCEPT, "Authorization": f"Token token={token.strip()}"}
    with httpx.Client(base_url=where.base_url, headers=headers, timeout=timeout) as client:
        walk = _Walk(_Api(client, display_name(where.base_url), sleep))
        seeds = [ServiceRef(s, TECHNICAL) for s in where.services]
        seeds += [ServiceRef(s, BUSINESS) for s in where.business_services]
        walk.run(seeds or walk.list_all())
    found, names, pages = tuple(walk.found.values()), MappingProxyType(walk.names), MappingProxyType(walk.pages)
    return ServiceGraph(walk.api.name, found, names, walk.problems(), pages)


class _Api:
    """GET with PagerDuty's headers, retrying rate limits and server errors a few times."""

    def __init__(self, client: httpx.Client, name: str, sleep: Sleep) -> None:
        self.client, self.name, self.sleep = client, name, sleep

    def get(self, path: str, params: Mapping[str, int] | None = None) -> object:
        url = f"{self.name}{path}"
        for attempt in range(RETRIES + 1):
            try:
                response = self.client.get(path, params=params)
            except httpx.HTTPError as exc:
                raise PagerDutyError(f"GET {url}: {type(exc).__name__}: {str(exc) or 'no detail'}") from exc
            if response.status_code not in _RETRIED or attempt == RETRIES:
                break
            self.sleep(_wait(response, attempt))
        return _decoded(url, response)


def _decoded(url: str, response: httpx.Response) -> object:
    status = response.status_code
    if response.is_success:
        try:
            return response.json()
        except ValueError as exc:
            raise PagerDutyError(f"GET {url}: the answer is not JSON ({exc}); is this the PagerDuty REST API?") from exc
    detail = _detail(response)
    if status in _REFUSED:
        raise _RefusedError(status, detail)
    said = f"HTTP {status} {response.reason_phrase}{f' ({detail})' if detail else ''}"
    if status in (401, 403):
        raise PagerDutyError(f"GET {url}: {said}: PagerDuty refused the API token; check it can read services")
    if status in _RETRIED:
        raise PagerDutyError(f"GET {url}: {said}, still after {RETRIES} retries")
    raise PagerDutyError(f"GET {url}: {said}")


def _detail(response: httpx.Response) -> str:
    try:
        return error_text(response.json())
    except ValueError:
        return ""


def error_text(body: object) -> str:
    """PagerDuty's own error (`{"error": {"message", "errors": [...]}}`), or "" for any other body."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        return ""
    errors = error.get("errors")
    more = "; ".join(e for e in errors if isinstance(e, str)) if isinstance(errors, list) else ""
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    return ": ".join(part for part in (message, more) if part)


def _wait(response: httpx.Response, attempt: int) -> float:
    """Seconds to wait: Retry-After (seconds or a date), else PagerDuty's ratelimit-reset, else backoff."""
    for header in ("retry-after", "ratelimit-reset"):
        value = response.headers.get(header, "").strip()
        try:
            return min(MAX_WAIT, max(0.0, float(value)))
        except ValueError:
            pass
        try:
            return min(MAX_WAIT, max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()))
        except (TypeError, ValueError, IndexError):
            pass
    return min(MAX_WAIT, 2.0**attempt)


class _Walk:
    def __init__(self, api: _Api) -> None:
        self.api = api
        self.names: dict[str, str] = {}
        self.pages: dict[str, str] = {}
        self.found: dict[str, Relationship] = {}
        self._problems: list[Problem] = []

    def problems(self) -> tuple[Problem, ...]:
        # A relationship is read from both of its ends: report its problems once.
        return tuple(dict.fromkeys(self._problems))

    def list_all(self) -> list[ServiceRef]:
        try:
            seeds = [ServiceRef(sid, TECHNICAL) for sid in self._listed(TECHNICAL)]
        except _RefusedError as exc:
            raise PagerDutyError(f"GET {self.api.name}{_OBJECTS[TECHNICAL][0]}: {exc}") from exc
        try:
            seeds += [ServiceRef(sid, BUSINESS) for sid in self._listed(BUSINESS)]
        except _RefusedError as exc:
            # Business services are a plan feature: without them the technical graph still stands.
            where = f"{self.api.name}{_OBJECTS[BUSINESS][0]}"
            self._problems.append(Problem(where, f"business services not listed ({exc}); only technical ones read"))
        if not seeds:
            self._problems.append(Problem(self.api.name, "PagerDuty listed no services"))
        return seeds

    def _listed(self, kind: str) -> Iterator[str]:
        path, key = _OBJECTS[kind]
        for index, item in enumerate(self._pages(path, f"{key}s")):
            sid = item.get("id") if isinstance(item, Mapping) else None
            if not isinstance(item, Mapping) or not isinstance(sid, str) or not sid.strip():
                self._problems.append(Problem(f"{self.api.name}{path}", "no id; skipped", f"{key}s[{index}].id"))
                continue
            name = item.get("name")
            if isinstance(name, str):
                self.names[sid.strip()] = name
            self._page(sid.strip(), item)
            yield sid.strip()

    def _page(self, sid: str, service: Mapping[str, object]) -> None:
        """The service's page in PagerDuty's web app, kept only as an http(s) URL."""
        page = service.get("html_url")
        if isinstance(page, str) and page.strip().startswith(("https://", "http://")):
            self.pages[sid] = page.strip()

    def _pages(self, path: str, key: str) -> Iterator[object]:
        offset = 0
        while True:
            body = self.api.get(path, {"limit": PAGE_SIZE, "offset": offset})
            items = body.get(key) if isinstance(body, Mapping) else None
            if not isinstance(items, list):
                raise PagerDutyError(f"GET {self.api.name}{path}: expected an object with a {key} array")
            yield from items
            if not isinstance(body, Mapping) or body.get("more") is not True or not items:
                return
            offset += len(items)

    def run(self, seeds: list[ServiceRef]) -> None:
        depth = {seed.id: 0 for seed in seeds}
        queue = deque({seed.id: seed for seed in seeds}.values())
        while queue:
            service = queue.popleft()
            for neighbor in self._visit(service):
                if neighbor.id in depth:
                    continue
                if depth[service.id] >= MAX_DEPTH:
                    message = f"the walk stopped {MAX_DEPTH} hops from the seeds; {neighbor.id} and beyond not read"
                    self._problems.append(Problem(f"pagerduty:{service.id}", message))
                    continue
                depth[neighbor.id] = depth[service.id] + 1
                queue.append(neighbor)

    def _visit(self, service: ServiceRef) -> list[ServiceRef]:
        path = _DEPENDENCIES[service.kind] + quote(service.id, safe="")
        where = f"{self.api.name}{path}"
        try:
            body = self.api.get(path)
        except _RefusedError as exc:
            self._refused(where, service, exc)
            return []
        relationships, problems = parse_relationships(where, body)
        self._problems += problems
        for r in relationships:
            self.found.setdefault(r.id, r)
        if service.id not in self.names:
            self._fetch_name(service)
        return [end for r in relationships for end in (r.supporting, r.dependent) if end.id != service.id]

    def _refused(self, where: str, service: ServiceRef, exc: _RefusedError) -> None:
        if exc.status == 402:
            raise PagerDutyError(f"GET {where}: {exc}: the account's plan has no service dependencies")
        what = "technical service" if service.kind == TECHNICAL else "business service"
        if exc.status == 404:
            message = f"PagerDuty has no {what} {service.id} ({exc}); its dependencies were not read"
        else:
            message = f"PagerDuty refused the dependencies of {what} {service.id} ({exc})"
        self._problems.append(Problem(where, message, severity="error"))

    def _fetch_name(self, service: ServiceRef) -> None:
        path, key = _OBJECTS[service.kind]
        where = f"{self.api.name}{path}/{quote(service.id, safe='')}"
        try:
            body = self.api.get(f"{path}/{quote(service.id, safe='')}")
        except _RefusedError as exc:
            self._problems.append(Problem(where, f"name of {service.id} not read ({exc})"))
            return
        found = body.get(key) if isinstance(body, Mapping) else None
        name = found.get("name") if isinstance(found, Mapping) else None
        if isinstance(found, Mapping):
            self._page(service.id, found)
        if isinstance(name, str) and name.strip():
            self.names[service.id] = name
        else:
            self._problems.append(Problem(where, f"no name for {service.id}", f"{key}.name"))

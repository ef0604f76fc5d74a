"""The configured sources, and reading each one into facts without ever raising.

The kinds are declared in `sync.sources.kinds` (no plugin discovery); this module binds each
declared `module:function` to its reader once, at import, so a misspelt reader fails at start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import import_module
from typing import Any, cast

from graph.facts import SourceFacts
from sync.sources.catalog_fetch import bearer_headers
from sync.sources.kinds import SOURCE_KINDS, SourceKind
from sync.sources.reading.limits import ReadLimits, reading_with
from sync.sources.reading.textfiles import is_url
from sync.sources.trace_options import TraceOptions
from sync.sources.versions import fetch_if_changed, local_version
from sync.store.fact_codec import EncodedFacts

Reader = Callable[..., SourceFacts | EncodedFacts]  # (source, location), and traces=, now= for trace kinds
TextParser = Callable[[str, str, str], SourceFacts]
Walker = Callable[..., SourceFacts]  # (source, location, *, token, timeout)


@dataclass(frozen=True, slots=True)
class SourceSpec:
    kind: str  # a SourceKind's name: catalog | deploys | docs | untrusted-docs | triples | aliases | pagerduty
    location: str

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.location}"


@dataclass(frozen=True, slots=True)
class SourceAccess:
    """How to reach sources: the HTTP timeout and the credentials some of them need."""

    timeout: float = 10.0
    tokens: Mapping[str, str] = field(default_factory=dict)  # kind -> its SourceKind.token's value
    limits: ReadLimits = ReadLimits()  # each read's byte cap and total deadline
    traces: TraceOptions = TraceOptions()  # how trace sources count calls
    backstage_url: str = ""  # the Backstage app's base URL (ONCALL_GRAPH_BACKSTAGE_URL): entity pages

    def token(self, kind: str) -> str:
        return self.tokens.get(kind, "")


def bound(reference: str) -> Callable[..., Any]:
    """The function a kind names as `module:function` inside sync.sources."""
    module, _, function = reference.partition(":")
    return cast(Callable[..., Any], getattr(import_module(f"sync.sources.{module}"), function))


KINDS: dict[str, SourceKind] = {kind.name: kind for kind in SOURCE_KINDS}
READERS: dict[str, Reader] = {k.name: bound(k.read) for k in SOURCE_KINDS if k.read}
TEXT_PARSERS: dict[str, TextParser] = {k.name: bound(k.parse_fetched) for k in SOURCE_KINDS if k.parse_fetched}
FETCH_URLS: dict[str, Callable[[str], str]] = {k.name: bound(k.fetch_url) for k in SOURCE_KINDS if k.fetch_url}
WALKERS: dict[str, Walker] = {k.name: bound(k.walk) for k in SOURCE_KINDS if k.walk}
VERSIONS: dict[str, Callable[[str], str]] = {k.name: bound(k.version) for k in SOURCE_KINDS if k.version}


def read_changed(
    spec: SourceSpec, previous: str, access: SourceAccess, *, now: datetime | None = None
) -> tuple[SourceFacts | EncodedFacts, str] | None:
    """(facts, content version) when the source changed since `previous`; None when it did not.

    `now` ends the window trace sources count calls over (the sync's clock; else the real one).
    Raises on any failure to read the source as a whole; bad parts inside it are problems.
    """
    with reading_with(access.limits):
        return _read_changed(spec, previous, access, now or datetime.now(UTC))


def _read_changed(
    spec: SourceSpec, previous: str, access: SourceAccess, now: datetime
) -> tuple[SourceFacts | EncodedFacts, str] | None:
    token = access.token(spec.kind)
    traced: dict[str, Any] = {"traces": access.traces, "now": now} if KINDS[spec.kind].traces else {}
    # A kind citing Backstage's entity pages reads again when the base URL changes: its citations do.
    paged: dict[str, Any] = {"pages": access.backstage_url} if KINDS[spec.kind].pages else {}
    salt = f"+pages={access.backstage_url}" if paged and access.backstage_url else ""
    if spec.kind in WALKERS:
        # A walk of an API has no version of its own; the store sees what changed.
        return WALKERS[spec.kind](spec.name, spec.location, token=token, timeout=access.timeout, **traced), ""
    if is_url(spec.location):
        parse = TEXT_PARSERS.get(spec.kind)
        if parse is None:
            raise ValueError(f"a {spec.kind} source is a local file or folder, not a URL: {spec.location}")
        url = FETCH_URLS[spec.kind](spec.location) if spec.kind in FETCH_URLS else spec.location
        known = previous.removesuffix(salt) if previous.endswith(salt) else ""
        fetched = fetch_if_changed(url, known, timeout=access.timeout, headers=bearer_headers(token))
        if fetched.body is None:
            return None
        return parse(spec.name, fetched.name, fetched.body, **paged), fetched.version + salt
    version = VERSIONS.get(spec.kind, local_version)(spec.location) + KINDS[spec.kind].revision
    version += (access.traces.version if traced else "") + salt
    if version == previous:
        return None
    return READERS[spec.kind](spec.name, spec.location, **traced, **paged), version

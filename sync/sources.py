"""The configured sources, and reading each one into facts without ever raising.

The list below is the registry of source kinds: no plugin discovery.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from graph.facts import SourceFacts
from sync.aliases_file import parse_aliases, read_aliases
from sync.catalog import catalog_api_url, parse_catalog_api, read_catalog
from sync.deploys import parse_deploys, read_deploys
from sync.runbooks import read_runbooks
from sync.textfiles import is_url
from sync.triples import parse_triples, read_triples
from sync.versions import fetch_if_changed, local_version

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SourceSpec:
    kind: str  # catalog | deploys | docs | untrusted-docs | triples | aliases
    location: str

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.location}"


@dataclass(frozen=True, slots=True)
class SourceRead:
    spec: SourceSpec
    facts: SourceFacts | None
    error: str
    read_at: datetime


def _untrusted(source: str, location: str) -> SourceFacts:
    return read_runbooks(source, location, trusted=False)


READERS: dict[str, Callable[[str, str], SourceFacts]] = {
    "catalog": read_catalog,
    "deploys": read_deploys,
    "docs": read_runbooks,
    "untrusted-docs": _untrusted,
    "triples": read_triples,
    "aliases": read_aliases,
}


# Sources that may live behind a URL: parse the fetched text (runbooks are local folders).
TEXT_PARSERS: dict[str, Callable[[str, str, str], SourceFacts]] = {
    "catalog": parse_catalog_api,
    "deploys": parse_deploys,
    "triples": parse_triples,
    "aliases": parse_aliases,
}


def read_source(spec: SourceSpec, clock: Callable[[], datetime]) -> SourceRead:
    """Read one source; any failure becomes the read's error, so one broken source spoils nothing."""
    try:
        facts = READERS[spec.kind](spec.name, spec.location)
    except Exception as exc:  # noqa: BLE001 - every failure must be recorded, not raised
        log.warning("source %s failed: %s", spec.name, exc)
        return SourceRead(spec, None, f"{type(exc).__name__}: {exc}", clock())
    return SourceRead(spec, facts, "", clock())


def read_changed(spec: SourceSpec, previous: str, *, timeout: float) -> tuple[SourceFacts, str] | None:
    """(facts, content version) when the source changed since `previous`; None when it did not.

    Raises on any failure to read the source as a whole; bad parts inside it are problems.
    """
    if is_url(spec.location):
        url = catalog_api_url(spec.location) if spec.kind == "catalog" else spec.location
        fetched = fetch_if_changed(url, previous, timeout=timeout)
        if fetched.body is None:
            return None
        return TEXT_PARSERS[spec.kind](spec.name, fetched.name, fetched.body), fetched.version
    version = local_version(spec.location)
    if version == previous:
        return None
    return READERS[spec.kind](spec.name, spec.location), version


def read_sources(specs: Iterable[SourceSpec], clock: Callable[[], datetime]) -> list[SourceRead]:
    return [read_source(spec, clock) for spec in specs]

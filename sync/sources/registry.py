"""The configured sources, and reading each one into facts without ever raising.

The list below is the registry of source kinds: no plugin discovery.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graph.facts import SourceFacts
from sync.sources.aliases import parse_aliases, read_aliases
from sync.sources.catalog import catalog_api_url, parse_catalog_api, read_catalog_rows
from sync.sources.catalog_fetch import bearer_headers
from sync.sources.deploys import parse_deploys, read_deploys
from sync.sources.pagerduty import read_pagerduty
from sync.sources.runbooks import read_runbooks
from sync.sources.textfiles import is_url
from sync.sources.triples import parse_triples, read_triples
from sync.sources.versions import fetch_if_changed, local_version
from sync.store.fact_codec import EncodedFacts


@dataclass(frozen=True, slots=True)
class SourceSpec:
    kind: str  # catalog | deploys | docs | untrusted-docs | triples | aliases | pagerduty
    location: str

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.location}"


@dataclass(frozen=True, slots=True)
class SourceAccess:
    """How to reach sources: the HTTP timeout and the credentials some of them need."""

    timeout: float = 10.0
    catalog_token: str = ""  # Backstage static access token (Authorization: Bearer)
    pagerduty_token: str = ""  # PagerDuty REST API key


def _untrusted(source: str, location: str) -> SourceFacts:
    return read_runbooks(source, location, trusted=False)


READERS: dict[str, Callable[[str, str], SourceFacts | EncodedFacts]] = {
    "catalog": read_catalog_rows,
    "deploys": read_deploys,
    "docs": read_runbooks,
    "untrusted-docs": _untrusted,
    "triples": read_triples,
    "aliases": read_aliases,
}


# Appended to a local source's content version when its reader learns to read more from the same
# files, so that sources synced before are read once more (runbooks gave no passages before).
READER_REVISIONS: dict[str, str] = {"docs": "+passages", "catalog": "+relations", "deploys": "+targets"}


# Sources that may live behind a URL: parse the fetched text (runbooks are local folders).
TEXT_PARSERS: dict[str, Callable[[str, str, str], SourceFacts]] = {
    "catalog": parse_catalog_api,
    "deploys": parse_deploys,
    "triples": parse_triples,
    "aliases": parse_aliases,
}


def read_changed(
    spec: SourceSpec, previous: str, access: SourceAccess
) -> tuple[SourceFacts | EncodedFacts, str] | None:
    """(facts, content version) when the source changed since `previous`; None when it did not.

    Raises on any failure to read the source as a whole; bad parts inside it are problems.
    """
    if spec.kind == "pagerduty":
        # A walk of PagerDuty's API has no version of its own; the store sees what changed.
        facts = read_pagerduty(spec.name, spec.location, token=access.pagerduty_token, timeout=access.timeout)
        return facts, ""
    if is_url(spec.location):
        headers = {}
        url = spec.location
        if spec.kind == "catalog":
            url, headers = catalog_api_url(spec.location), bearer_headers(access.catalog_token)
        fetched = fetch_if_changed(url, previous, timeout=access.timeout, headers=headers)
        if fetched.body is None:
            return None
        return TEXT_PARSERS[spec.kind](spec.name, fetched.name, fetched.body), fetched.version
    version = local_version(spec.location) + READER_REVISIONS.get(spec.kind, "")
    if version == previous:
        return None
    return READERS[spec.kind](spec.name, spec.location), version

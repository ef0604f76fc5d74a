"""Edges as the one-line receipts people read: `a -rel-> b [sources] xN`, and each receipt's
place to open where its source said one."""

from __future__ import annotations

from dataclasses import dataclass

from graph.edges import EdgeFacts
from graph.naming.refs import short_name

PAGERDUTY_PREFIX = "pagerduty:"


@dataclass(frozen=True, slots=True)
class CitedSource:
    """One receipt of an edge: its locator as people read it (`catalog/payments.yaml#3`) and where it
    opens (`url`, "" when no source said): untrusted text, made a link only at an escaping boundary."""

    source: str
    url: str

    @property
    def label(self) -> str:
        """What the receipt is, to name its link by: `PagerDuty`, or the cited file's name
        (`payments.yaml`), never the URL's own text."""
        if self.source.startswith(PAGERDUTY_PREFIX):
            return "PagerDuty"
        place = self.source.partition("#")[0]
        document, colon, line = place.rpartition(":")
        if colon and line.isdigit():
            place = document
        return place.rstrip("/").rpartition("/")[2] or self.source


def cited_sources(edge: EdgeFacts) -> tuple[CitedSource, ...]:
    """The edge's receipts in the order of `edge.sources` (one per locator), each with the first URL
    a citation at that locator carries. Computed for the edges an answer shows, never stored."""
    urls: dict[str, str] = {}
    for c in edge.citations:
        if not urls.get(c.locator):
            urls[c.locator] = c.url
    return tuple(CitedSource(locator, url) for locator, url in urls.items())


def cite_edge(edge: EdgeFacts) -> str:
    """`auth-service -depends_on-> token-cache [docs/auth.md:3, catalog/auth.yaml#1] x2`; an edge
    traces saw says so: `(observed)`, or `(declared + observed)` where both agree."""
    via = f" (via {short_name(edge.via[0])})" if edge.via else ""
    soft = " (soft)" if edge.soft else ""
    sources = ", ".join(edge.sources)
    seen = f" ({provenance(edge)})" if edge.observed else ""
    head = f"{short_name(edge.src)} -{edge.rel}-> {short_name(edge.dst)}{via}{soft}{seen}"
    return f"{head} [{sources}] x{edge.weight}"


def provenance(edge: EdgeFacts) -> str:
    """Where a hop comes from: `declared`, `observed`, or `declared + observed`."""
    if edge.observed and edge.declared:
        return "declared + observed"
    return "observed" if edge.observed else "declared"

"""Which citation URLs a front may show: only http(s) addresses with a host, whole and printable.

A URL is a source's text like any other (a descriptor's annotation, a deploy feed's field): a
`javascript:` or `data:` one, or one hiding a control character, is never shown as where a citation
opens. Slack's links are built from what passes here by `bot/slack/blocks/kit.py`, which checks again.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

from graph.citations import CitedSource, cited_sources
from graph.edges import EdgeFacts


@functools.lru_cache(maxsize=4096)  # a catalog file's URL is cited by every edge its document declares
def web_url(url: str) -> str | None:
    """`url` when it is an http(s) URL with a host and nothing unprintable or blank in it; else None."""
    if not url or any(ch.isspace() or unicodedata.category(ch)[0] == "C" for ch in url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    return url if parts.scheme.lower() in ("http", "https") and host else None


def opening_lines(edge: EdgeFacts, indent: str) -> list[str]:
    """Under an edge's receipt, each of its sources that opens somewhere with its URL beside it
    (`↗ catalog/payments.yaml#3 https://…`), for plain text: the terminal, Slack's attached text."""
    return [f"{indent}  ↗ {c.source} {url}" for c in cited_sources(edge) if (url := web_url(c.url))]


def opened(edges: Iterable[EdgeFacts]) -> Iterator[CitedSource]:
    """The receipts of `edges` that open somewhere, each URL once, in the order the edges cite them."""
    seen: set[str] = set()
    for edge in edges:
        for cited in cited_sources(edge):
            url = web_url(cited.url)
            if url is not None and url not in seen:
                seen.add(url)
                yield CitedSource(cited.source, url)

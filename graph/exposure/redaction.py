"""What a viewer may not read about the entities hidden from them: any of their names, and every
citation or passage that carries one.

Hiding an entity's node is not enough: its name also travels in the locators of edges between
visible entities (`runbooks/vault-proxy.md:3`, `catalog/vault-proxy.yaml#2`), in the section a
runbook sentence stands in, in the quoted sentence itself and in passages. A text "names" a hidden
entity when any canonical alias of it appears in the text's words; names a hidden entity shares
with a visible one count too (the safe side: a leak is worse than a missing receipt). A redacted
citation keeps its place in the edge's weight but reads HIDDEN_SOURCE, which names nothing.

Pure: no I/O. The hidden names and the runbooks' sections are indexed once per built graph.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from graph.exposure.visibility import HIDDEN, Viewer, can_see, restricted_refs
from graph.facts import Citation, Passage
from graph.naming.names import name_words
from graph.observed import dress

if TYPE_CHECKING:
    from graph.edges import EdgeFacts
    from graph.snapshot import Snapshot

HIDDEN_SOURCE = "(hidden source)"
HIDDEN_TEXT = "(hidden: it names an entity not shown here)"
_NAMES = f"{__name__}.names"  # this module's keys in `Snapshot.derived`
_SECTIONS = f"{__name__}.sections"


def hidden_from(snapshot: Snapshot, viewer: Viewer) -> frozenset[str]:
    """The restricted entities this viewer may not see (none for operators)."""
    if viewer.everything:
        return frozenset()
    return frozenset(ref for ref in restricted_refs(snapshot) if not can_see(snapshot, ref, viewer))


def hidden_name_index(snapshot: Snapshot) -> Mapping[str, frozenset[str]]:
    """Each restricted entity's names as canonical word strings: built on first use, once per graph."""
    index: Mapping[str, frozenset[str]] | None = snapshot.derived.get(_NAMES)
    if index is None:
        restricted = restricted_refs(snapshot)
        found: dict[str, set[str]] = {ref: {" ".join(name_words(ref.rpartition("/")[2]))} for ref in restricted}
        if restricted:
            for key, refs in snapshot.aliases.tier("canonical").items():
                for ref in refs & restricted:
                    found[ref].add(key)
        # A bare number ("svc-42" is "42" once canonical) would hide every line number.
        index = snapshot.derived[_NAMES] = MappingProxyType(
            {ref: frozenset(k for k in keys if len(k) > 1 and not k.isdigit()) for ref, keys in found.items()}
        )
    return index


def hidden_names(snapshot: Snapshot, viewer: Viewer) -> frozenset[str]:
    """Every name and alias (as canonical words) of the entities hidden from this viewer."""
    index = hidden_name_index(snapshot)
    return frozenset(key for ref in hidden_from(snapshot, viewer) for key in index[ref])


def names_hidden(snapshot: Snapshot, text: str, viewer: Viewer) -> bool:
    """Whether `text` names (by any name or alias) an entity hidden from this viewer."""
    return _names_any(text, hidden_names(snapshot, viewer))


def redact_text(snapshot: Snapshot, text: str, viewer: Viewer) -> str:
    """`text` (an alert title, a service name someone typed) whole, or HIDDEN_TEXT when it names a
    hidden entity: a title is too short to keep the rest of it safely."""
    return HIDDEN_TEXT if names_hidden(snapshot, text, viewer) else text


def passage_hidden(snapshot: Snapshot, passage: Passage, viewer: Viewer) -> bool:
    """A passage whose file, section path or text names a hidden entity."""
    names = hidden_names(snapshot, viewer)
    parts = (passage.locator, passage.document, *passage.headings, passage.heading, passage.text)
    return any(_names_any(part, names) for part in parts)


def _citation_hidden(snapshot: Snapshot, citation: Citation, names: frozenset[str]) -> bool:
    """A citation whose locator, quoted sentence or runbook section names one of `names`."""
    if _names_any(citation.locator, names) or _names_any(citation.text, names):
        return True
    section = _section(snapshot, citation)
    return section is not None and any(_names_any(h, names) for h in section.headings)


def _redacted(snapshot: Snapshot, citation: Citation, names: frozenset[str]) -> Citation:
    """A citation naming a hidden entity reads HIDDEN_SOURCE and keeps no URL; one whose URL alone
    names one keeps its receipt without the URL."""
    if _citation_hidden(snapshot, citation, names):
        return Citation(citation.source, HIDDEN_SOURCE, citation.unit, "", citation.extracted, citation.evidence)
    if _names_any(citation.url, names):
        return replace(citation, url="")
    return citation


def _names_any(text: str, names: frozenset[str]) -> bool:
    if not names or not text:
        return False
    words = f" {' '.join(name_words(text))} "
    return any(f" {key} " in words for key in names)


def redact_path(
    snapshot: Snapshot, path: tuple[str, ...], edges: tuple[EdgeFacts, ...], viewer: Viewer
) -> tuple[tuple[str, ...], tuple[EdgeFacts, ...], int]:
    """(path with hidden entities replaced by HIDDEN, the edges between visible ones as this viewer
    may read them, hidden count)."""
    shown = tuple(r if can_see(snapshot, r, viewer) else HIDDEN for r in path)
    kept = tuple(
        redact_edge(snapshot, e, viewer)
        for e in edges
        if can_see(snapshot, e.src, viewer) and can_see(snapshot, e.dst, viewer)
    )
    return shown, kept, shown.count(HIDDEN)


def redact_edge(snapshot: Snapshot, edge: EdgeFacts, viewer: Viewer) -> EdgeFacts:
    """The edge as this viewer may read it: citations naming a hidden entity read HIDDEN_SOURCE (their
    URL dropped with them, as is a URL that names one), an API it was derived through that is hidden
    is dropped. Observed citations tell their calls (`graph.observed.dress`): every edge an answer
    shows passes here."""
    return edge_redactor(snapshot, viewer)(edge)


def edge_redactor(snapshot: Snapshot, viewer: Viewer) -> Callable[[EdgeFacts], EdgeFacts]:
    """`redact_edge` for many edges of one answer: the viewer's hidden names are found once, not
    per edge (`drift` redacts every disagreeing edge: 300k at 100k entities)."""
    names = hidden_names(snapshot, viewer)
    calls = snapshot.calls

    def redact(edge: EdgeFacts) -> EdgeFacts:
        edge = dress(edge, calls)
        if not names:
            return edge
        citations = tuple(_redacted(snapshot, c, names) for c in edge.citations)
        via = tuple(api for api in edge.via if can_see(snapshot, api, viewer))
        if citations == edge.citations and via == edge.via:
            return edge
        return replace(edge, citations=citations, via=via)

    return redact


def section_index(snapshot: Snapshot) -> Mapping[str, tuple[tuple[int, ...], tuple[Passage, ...]]]:
    """Each runbook's passages by starting line, to find the section a `document:line` citation
    stands in: built on first use, once per graph."""
    index: Mapping[str, tuple[tuple[int, ...], tuple[Passage, ...]]] | None = snapshot.derived.get(_SECTIONS)
    if index is None:
        grouped: dict[str, list[Passage]] = defaultdict(list)
        # Only a citation naming a hidden entity is looked up here: with nothing hidden, nothing to index.
        for passage in snapshot.passages if restricted_refs(snapshot) else ():
            grouped[passage.document].append(passage)
        sections = {}
        for name, found in grouped.items():
            found.sort(key=lambda p: p.line)
            sections[name] = (tuple(p.line for p in found), tuple(found))
        index = snapshot.derived[_SECTIONS] = MappingProxyType(sections)
    return index


def _section(snapshot: Snapshot, citation: Citation) -> Passage | None:
    """The passage a `document:line` citation stands in (the nearest one starting at or before it)."""
    document, _, line = citation.locator.rpartition(":")
    if not document or not line.isdigit():
        return None
    lines, passages = section_index(snapshot).get(citation.origin or document, ((), ()))
    at = bisect_right(lines, int(line)) - 1
    return passages[at] if at >= 0 else None

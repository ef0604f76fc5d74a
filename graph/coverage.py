"""How much the graph can know: how many components declare their dependencies, how many had
observed traffic, which trace sources are configured. An answer that finds nothing says this much,
so "nothing breaks" is never said with more confidence than the graph has. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph.naming.refs import short_name
from graph.observed import is_trace_source
from graph.relations import propagates

if TYPE_CHECKING:
    from graph.snapshot import Snapshot

COMPONENT = "component"
DEPENDENTS, DEPENDENCIES = "dependents", "dependencies"
_COUNTS = f"{__name__}.counts"  # this module's key in `Snapshot.derived`


@dataclass(frozen=True, slots=True)
class Coverage:
    components: int
    declaring_dependencies: int  # components that declare at least one dependency
    with_observed_traffic: int  # components traces saw calling or called
    trace_sources: tuple[str, ...]  # the configured trace sources (source names)


def coverage(snapshot: Snapshot) -> Coverage:
    """How much the graph can know: counted once per built graph (the marks say which trace
    sources are configured, and they move without a rebuild)."""
    counts: tuple[int, int, int] | None = snapshot.derived.get(_COUNTS)
    if counts is None:
        counts = snapshot.derived[_COUNTS] = _counts(snapshot)
    sources = tuple(sorted(name for name in snapshot.marks if is_trace_source(name)))
    return Coverage(*counts, trace_sources=sources)


def _counts(snapshot: Snapshot) -> tuple[int, int, int]:
    components = {ref for ref, e in snapshot.entities.items() if e.kind == COMPONENT and not e.placeholder}
    declaring = {
        ref for ref in components if any(propagates(e.rel) and e.declared for e in snapshot.out_edges.get(ref, ()))
    }
    seen = traffic(snapshot)
    return len(components), len(declaring), len(components & seen)


def traffic(snapshot: Snapshot) -> set[str]:
    """The entities traces saw on either end of a call."""
    found: set[str] = set()
    for edges in snapshot.out_edges.values():
        for e in edges:
            if e.observed:
                found.update((e.src, e.dst))
    return found


def what_it_knows(found: Coverage) -> str:
    """`0 of 499 components declare dependencies; no trace source is configured.`"""
    declared = f"{found.declaring_dependencies:,} of {found.components:,} components declare dependencies"
    if not found.trace_sources:
        return f"{declared}; no trace source is configured."
    sources = ", ".join(_source_label(s) for s in found.trace_sources)
    return f"{declared}; {found.with_observed_traffic:,} have observed traffic ({sources})."


def nothing_found(entity: str, direction: str, found: Coverage | None) -> str:
    """What an answer that finds no DEPENDENTS (or no DEPENDENCIES) says instead of "nothing":
    `No dependents of cert-manager-app are declared or observed. 0 of 499 components declare …`."""
    head = f"No {direction} of {short_name(entity)} are declared or observed."
    return head if found is None else f"{head} {what_it_knows(found)}"


def _source_label(name: str) -> str:
    kind, _, location = name.partition(":")
    return f"{kind} {location}"

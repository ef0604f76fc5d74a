"""The immutable snapshot every answer is computed from, and the cell that swaps it atomically."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from graph.edges import EdgeFacts
from graph.facts import Assertion, CallCount, Citation, Deploy, Entity, Passage, Problem, SourceMark
from graph.naming.names import AliasIndex
from graph.observed import UnknownService
from graph.relations import OWNED_BY


@dataclass(frozen=True, slots=True)
class Hygiene:
    """What the build noticed about the inputs' quality (the `lint` report)."""

    dangling: tuple[Problem, ...] = ()
    kindless: tuple[Problem, ...] = ()
    unknown_owners: tuple[Problem, ...] = ()
    ambiguous_names: tuple[Problem, ...] = ()
    unresolved_deploys: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class OwnerClaim:
    owner: str
    citations: tuple[Citation, ...]
    extracted: bool


@dataclass(frozen=True)
class Snapshot:
    """Entities, edges (forward and reverse), aliases, deploys and source marks at one moment.

    Never mutated after `graph.build.build_snapshot` returns it; walks read `out_edges`,
    `in_edges` or the compiled walk index (`graph.walks.compiled.walk_index`).
    """

    entities: Mapping[str, Entity]
    out_edges: Mapping[str, tuple[EdgeFacts, ...]]
    in_edges: Mapping[str, tuple[EdgeFacts, ...]]
    aliases: AliasIndex
    deploys: Mapping[str, tuple[Deploy, ...]]
    built_at: datetime
    marks: Mapping[str, SourceMark] = field(default_factory=dict)
    held: tuple[Assertion, ...] = ()
    problems: tuple[Problem, ...] = ()
    hygiene: Hygiene = field(default_factory=Hygiene)
    edge_count: int = 0
    passages: tuple[Passage, ...] = ()
    # The store's graph version whose facts this was built from (-1: not from a store, or a past
    # graph): a deploy delta applies only to the version it follows.
    version: int = -1
    # What a deploy delta (`graph.deploys.deploy_delta`) needs to place deploys as the build does: the
    # alias-file names that stand for another name, and how many live deploy facts carry each id.
    deploy_names: Mapping[str, str] = field(default_factory=dict)
    deploy_ids: Mapping[str, int] = field(default_factory=dict)
    # Observed calls, beside the edges they count (keyed by the observation's citation origin):
    # a poll that changes only the counts replaces them, never the graph (`with_marks`).
    calls: Mapping[str, CallCount] = field(default_factory=dict)
    unknown_services: tuple[UnknownService, ...] = ()  # telemetry names no entity answers to
    # Indexes derived from the facts, each filled by the module that owns it (`graph.walks.compiled`,
    # `graph.exposure.visibility`, `graph.exposure.passages`, `graph.walks.blast`, ...) under a key of its own. An entry
    # depends on the catalog facts alone, never on the marks or the deploys (so `with_marks` and a
    # deploy delta share them), and never
    # refers back to the snapshot (so a replaced snapshot is freed by reference counting).
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def edge(self, src: str, rel: str, dst: str) -> EdgeFacts | None:
        for facts in self.out_edges.get(src, ()):
            if facts.rel == rel and facts.dst == dst:
                return facts
        return None

    def owner_claims(self, ref: str) -> tuple[OwnerClaim, ...]:
        """Every owner any source named, catalog-backed claims first."""
        claims = [OwnerClaim(e.dst, e.citations, e.extracted) for e in self.out_edges.get(ref, ()) if e.rel == OWNED_BY]
        return tuple(sorted(claims, key=lambda c: (c.extracted, c.owner)))

    def owners(self, ref: str) -> tuple[str, ...]:
        """Owners to page: catalog owners when the catalog names any (text never overrides them)."""
        claims = self.owner_claims(ref)
        trusted = [c.owner for c in claims if not c.extracted]
        return tuple(trusted or [c.owner for c in claims])

    def age_mark(self) -> SourceMark | None:
        """The oldest successful source: an answer is only as fresh as its stalest input.

        Pushed sources are left out: their last event dates the last deploy, not the graph."""
        dated = [m for m in self.marks.values() if m.last_success is not None and not m.pushed]
        return min(dated, key=lambda m: m.last_success or self.built_at, default=None)

    def with_marks(self, marks: Mapping[str, SourceMark], *, calls: Mapping[str, CallCount] | None = None) -> Snapshot:
        """The same graph with fresher source marks (and call counts); the derived indexes carry over."""
        counted = self.calls if calls is None else MappingProxyType(dict(calls))
        fresh = replace(self, marks=MappingProxyType(dict(marks)), calls=counted)
        object.__setattr__(fresh, "derived", self.derived)  # same facts, same indexes: never rebuilt
        return fresh


class SnapshotRef:
    """The swap cell: readers call `current()` once per request; `swap` is one assignment.

    `prepare` runs on every new snapshot before it serves: the composition roots pass one that
    builds the indexes answers use (`graph.warm.warm`), so no query after a sync pays for them,
    and applies the process's memory policy.
    """

    def __init__(self, initial: Snapshot | None = None, *, prepare: Callable[[Snapshot], None] | None = None) -> None:
        self._current = initial
        self._prepare = prepare
        self._lock = threading.Lock()

    def current(self) -> Snapshot | None:
        return self._current

    def swap(self, new: Snapshot) -> Snapshot | None:
        """Serve `new`; returns the snapshot it replaced, or `new` itself when refused: one built
        from an older graph version than the one serving (two builds that raced) never replaces it."""
        if self._prepare is not None:
            self._prepare(new)
        with self._lock:
            old = self._current
            if old is not None and _older(new, old):
                return new
            self._current = new
        return old


def _older(new: Snapshot, serving: Snapshot) -> bool:
    # -1 is no store version (a test's graph, a past graph): such a swap is never refused.
    return 0 <= new.version < serving.version

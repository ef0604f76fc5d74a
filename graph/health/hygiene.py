"""The hygiene report: what in the inputs makes answers weaker than they should be."""

from __future__ import annotations

from dataclasses import dataclass

from graph.facts import Problem, SourceMark
from graph.naming.names import AliasCollision
from graph.snapshot import Snapshot
from graph.traffic.drift import Drift, drift

OWNED_KINDS = frozenset({"component", "resource", "api", "system"})
OWNER_FIELD = "spec.owner"


@dataclass(frozen=True, slots=True)
class LintReport:
    dangling: tuple[Problem, ...]
    kindless: tuple[Problem, ...]
    unknown_owners: tuple[Problem, ...]
    alias_collisions: tuple[AliasCollision, ...]
    without_owner: tuple[Problem, ...]  # each at the entity's file and document, field spec.owner
    unresolved_deploys: tuple[Problem, ...]
    input_problems: tuple[Problem, ...]
    not_descriptors: tuple[Problem, ...] = ()  # YAML beside the descriptors: counted, not a problem
    failed_sources: tuple[SourceMark, ...] = ()  # whose last read gave nothing usable: answers lack them
    drift: Drift | None = None  # where catalog and traffic disagree: reported, not a hygiene failure

    @property
    def clean(self) -> bool:
        return not (
            self.dangling
            or self.kindless
            or self.unknown_owners
            or self.alias_collisions
            or self.without_owner
            or self.unresolved_deploys
            or self.input_problems
            or self.failed_sources
        )


def lint(snapshot: Snapshot) -> LintReport:
    """Dangling refs, kindless refs, unknown owners, alias collisions, entities without an owner."""
    hygiene = snapshot.hygiene
    reported = set(hygiene.dangling + hygiene.kindless + hygiene.ambiguous_names)
    without_owner = entities_without_owner(snapshot)
    # The reader's "owner required" warning for the same document says what this entry says.
    unowned = {p.where for p in without_owner}
    return LintReport(
        dangling=hygiene.dangling,
        kindless=hygiene.kindless,
        unknown_owners=hygiene.unknown_owners,
        alias_collisions=alias_collisions(snapshot),
        without_owner=without_owner,
        unresolved_deploys=hygiene.unresolved_deploys,
        input_problems=tuple(
            p
            for p in snapshot.problems
            if p not in reported and not p.note and not (p.field == OWNER_FIELD and p.where in unowned)
        ),
        not_descriptors=tuple(p for p in snapshot.problems if p.note),
        failed_sources=tuple(sorted((m for m in snapshot.marks.values() if not m.ok), key=lambda m: m.name)),
        drift=drift(snapshot),
    )


def alias_collisions(snapshot: Snapshot) -> tuple[AliasCollision, ...]:
    """Names that two entities claim at the tier where a lookup would stop: those never resolve."""
    index = snapshot.aliases
    found = []
    for collision in index.collisions():
        tier, _refs = index.lookup(collision.key)
        if tier == collision.tier:
            found.append(collision)
    return tuple(found)


def entities_without_owner(snapshot: Snapshot) -> tuple[Problem, ...]:
    """Components, resources, APIs and systems defined by a source that name no owner, each at the
    document that defines it, sorted by ref."""
    return tuple(
        Problem(e.citation.locator, f"{ref} names no owner (Backstage refuses a {e.kind} without one)", OWNER_FIELD)
        for ref, e in sorted(snapshot.entities.items())
        if e.kind in OWNED_KINDS and not e.placeholder and not snapshot.owners(ref)
    )

"""Merge the facts of every source into one immutable snapshot. Pure: no I/O, no clock."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import attrgetter
from types import MappingProxyType
from typing import NamedTuple

from graph.background import stepping
from graph.deploys.deploy_targets import DeployTargetIndex, deploy_target_index, place_deploy, problem_order
from graph.edges import EdgeFacts, new_edge_facts
from graph.evidence import OBSERVED
from graph.facts import (
    AliasClaim,
    Assertion,
    CallCount,
    Citation,
    Deploy,
    Entity,
    Passage,
    Problem,
    SourceFacts,
    SourceMark,
)
from graph.naming.names import AliasIndex, exact_key, loose, match, slug
from graph.naming.refs import RefError, format_ref, split_ref
from graph.observed import ServiceNames, UnknownService, declared_pairs, observed_edges
from graph.relations import OWNED_BY, RUNTIME_KINDS, propagates
from graph.snapshot import Hygiene, Snapshot

ALIASES_ANNOTATION = "oncall-graph/aliases"
PAGERDUTY_ANNOTATION = "pagerduty.com/service-id"
SOFT_ANNOTATION = "oncall-graph/soft-dependencies"


@dataclass
class _Work:
    entities: dict[str, Entity] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    dangling: list[Problem] = field(default_factory=list)
    kindless: list[Problem] = field(default_factory=list)
    ambiguous: list[Problem] = field(default_factory=list)


def build_snapshot(
    batches: Iterable[SourceFacts],
    *,
    built_at: datetime,
    marks: Mapping[str, SourceMark] | None = None,
    version: int = -1,
    calls: Mapping[str, CallCount] | None = None,
) -> Snapshot:
    """One edge per (src, rel, dst) with every citation; weight = distinct sources; refs all resolved.

    Names that match no entity become placeholder entities; dangling and kindless refs are
    reported in `hygiene`, never silently dropped. A large graph is millions of objects: the
    process pauses its garbage collector around the build (`sync.collector`), not this module.
    """
    snapshot = _build(tuple(batches), built_at, marks, version)
    return snapshot if calls is None else snapshot.with_marks(snapshot.marks, calls=calls)


def _build(
    batches: tuple[SourceFacts, ...], built_at: datetime, marks: Mapping[str, SourceMark] | None, version: int
) -> Snapshot:
    work = _Work()
    for batch in batches:
        work.problems.extend(batch.problems)
        _add_entities(work, batch.entities)
    claims = [claim for batch in batches for claim in batch.aliases]
    name_targets = _name_targets(claims)
    namer = _Namer(work, claims, name_targets)

    assertions = (a for batch in batches for a in batch.assertions)
    # Nearly every assertion needs nothing resolved: taken as it is, without a call (a million).
    pending = [
        p for a in stepping(assertions) if (p := _resolve_assertion(work, namer, a) if a.by_name or a.kindless else a)
    ]
    namer.create_placeholders()
    # One pass: resolved, held apart, and its dangling endpoints kept as placeholders, in order.
    live: list[Assertion] = []
    held_back: list[Assertion] = []
    entities = work.entities
    for p in stepping(pending):
        a = p if type(p) is Assertion else namer.final(p)
        if a.held:
            held_back.append(a)
            continue
        live.append(a)
        if not a.by_name and (a.dst not in entities or a.src not in entities):
            _ensure_dangling(work, a.dst, a.citation)
            _ensure_dangling(work, a.src, a.citation)
    del pending
    held = tuple(held_back)

    # Each (name, ref) once: a catalog's titles and PagerDuty ids come both as entity fields and
    # as alias claims, and the index does the same work for every pair it is given.
    named = _entity_names(work.entities, claims) + namer.spellings() + namer.claimed_names()
    final_index = _unshadowed_index(dict.fromkeys(named), _identifiers(work.entities), work.entities)
    soft_pairs = _soft_pairs(work, final_index)
    live, unknown_services = _with_observed(work, final_index, live, batches)
    edges = _merge_edges(live, soft_pairs)
    out_edges, in_edges = edges.out_edges, edges.in_edges
    deploys, unresolved = _attach_deploys(work, final_index, name_targets, batches)
    hygiene = Hygiene(
        dangling=tuple(work.dangling),
        kindless=tuple(work.kindless),
        unknown_owners=_unknown_owners(work.entities, edges),
        ambiguous_names=tuple(work.ambiguous),
        unresolved_deploys=tuple(sorted(unresolved, key=problem_order)),
    )
    return Snapshot(
        entities=MappingProxyType(work.entities),
        out_edges=MappingProxyType(out_edges),
        in_edges=MappingProxyType(in_edges),
        aliases=final_index,
        deploys=MappingProxyType(deploys),
        built_at=built_at,
        marks=MappingProxyType(dict(marks or {})),
        held=held,
        problems=tuple(work.problems) + hygiene.dangling + hygiene.kindless + hygiene.ambiguous_names,
        hygiene=hygiene,
        edge_count=edges.edge_count,
        passages=collect_passages(batches),
        version=version,
        deploy_names=MappingProxyType(name_targets),
        deploy_ids=MappingProxyType(Counter(d.id for batch in batches for d in batch.deploys)),
        calls=MappingProxyType({c.key: c for batch in batches for c in batch.calls}),
        unknown_services=unknown_services,
    )


def _with_observed(
    work: _Work, index: AliasIndex, live: list[Assertion], batches: tuple[SourceFacts, ...]
) -> tuple[list[Assertion], tuple[UnknownService, ...]]:
    """The live assertions with the calls traces saw between entities; the names no entity answers to."""
    observations = [o for batch in batches for o in batch.observations]
    if not observations:
        return live, ()
    seen = observed_edges(stepping(observations), ServiceNames(work.entities, index), declared_pairs(live))
    return live + list(seen.assertions), seen.unknown


def collect_passages(batches: Iterable[SourceFacts]) -> tuple[Passage, ...]:
    """Every source's passages, each once (two sources may read the same folder)."""
    found: dict[tuple[str, int, str], Passage] = {}
    for batch in batches:
        for passage in batch.passages:
            found.setdefault((passage.locator, passage.line, passage.text), passage)
    return tuple(found.values())


def _add_entities(work: _Work, entities: Iterable[Entity]) -> None:
    for entity in stepping(entities):
        first = work.entities.get(entity.ref)
        if first is None:
            work.entities[entity.ref] = entity
        elif first.citation.locator != entity.citation.locator:
            work.problems.append(
                Problem(entity.citation.locator, f"{entity.ref} is already defined at {first.citation}; kept that one")
            )


def _identifiers(entities: Mapping[str, Entity]) -> list[tuple[str, str]]:
    """Refs and their short forms: matched only as typed, never canonicalized.

    `kind:name` is a ref without a namespace, which means `default` (Backstage, and the contract):
    `user:guest` is `user:default/guest`, never `user:development/guest`.
    """
    found: list[tuple[str, str]] = []
    for ref, e in stepping(entities.items()):
        found += [(ref, ref), (f"{e.namespace}/{e.name}", ref)]
        if e.namespace == "default":
            found.append((f"{e.kind}:{e.name}", ref))
    return found


def _unshadowed_index(
    named: Mapping[tuple[str, str], None], identifiers: list[tuple[str, str]], entities: Mapping[str, Entity]
) -> AliasIndex:
    """The alias index, without the names a placeholder shares with a defined entity.

    A placeholder made from a dangling `system:carts` must not make the component `carts` ambiguous:
    a defined entity keeps its name. Checked on the built index (only placeholders' names, a few), and
    built again only when one was shadowed.
    """
    index = AliasIndex(named, identifiers)
    placeholders = {ref for ref, e in entities.items() if e.placeholder}
    if not placeholders:
        return index
    exact = index.tier("exact")
    shadowed = {
        pair
        for pair in named
        if pair[1] in placeholders and any(ref not in placeholders for ref in exact.get(exact_key(pair[0]), ()))
    }
    return AliasIndex([pair for pair in named if pair not in shadowed], identifiers) if shadowed else index


def _entity_names(entities: Mapping[str, Entity], claims: Iterable[AliasClaim]) -> list[tuple[str, str]]:
    names: list[tuple[str, str]] = []
    for ref, e in stepping(entities.items()):
        names.append((e.name, ref))
        if e.title:
            names.append((e.title, ref))
        names += [(a, ref) for a in e.annotations.get(ALIASES_ANNOTATION, "").split(",") if a.strip()]
        if pd_id := e.annotations.get(PAGERDUTY_ANNOTATION, "").strip():
            names.append((pd_id, ref))
    names += [(c.alias, c.target) for c in claims if not c.target_is_name and c.target in entities]
    return names


def _name_targets(claims: Iterable[AliasClaim]) -> dict[str, str]:
    """Alias-file entries that point at a plain name: alias (loose key) -> that name."""
    return {loose(c.alias): c.target for c in claims if c.target_is_name}


class _Namer:
    """Turns free-text names into refs: catalog entities first, else one placeholder per loose key."""

    def __init__(self, work: _Work, claims: list[AliasClaim], name_targets: Mapping[str, str]) -> None:
        self._work, self._claims, self._targets = work, claims, name_targets
        self._index: AliasIndex | None = None
        self._spellings: dict[str, Counter[str]] = defaultdict(Counter)
        self._kinds: dict[str, str] = {}
        self._citations: dict[str, Citation] = {}

    def ref_for(self, name: str, *, default_kind: str, citation: Citation) -> str | None:
        for candidate in (name, self._targets.get(loose(name), "")):
            if not candidate:
                continue
            resolution = match(self._alias_index(), candidate)
            if resolution.entity:
                return resolution.entity
            if resolution.ambiguous:
                self._work.ambiguous.append(
                    Problem(
                        citation.locator,
                        f"{name!r} could name {', '.join(resolution.candidates)}; edge skipped, add an alias",
                    )
                )
                return None
        target = self._targets.get(loose(name), name)
        key = loose(target)
        if not key:
            return None
        self._spellings[key][target] += 1
        if default_kind == "group" or key not in self._kinds:
            self._kinds.setdefault(key, default_kind)
        self._citations.setdefault(key, citation)
        return f"?{key}"

    def _alias_index(self) -> AliasIndex:
        # Built on the first by-name assertion: a catalog-only build never needs it, and building an
        # alias index is the costliest step of a build (bench: about 4 s of a 100k-entity build).
        # Entities do not change before placeholders are created, so the index is the same.
        if self._index is None:
            self._index = AliasIndex(
                _entity_names(self._work.entities, self._claims), _identifiers(self._work.entities)
            )
        return self._index

    def create_placeholders(self) -> None:
        self._final: dict[str, str] = {}
        for key, spellings in self._spellings.items():
            best = min(spellings, key=lambda s: (-spellings[s], slug(s)))
            ref = format_ref(self._kinds[key], "default", slug(best))
            self._final[f"?{key}"] = ref
            if ref not in self._work.entities:
                self._work.entities[ref] = Entity(
                    ref, self._kinds[key], slug(best), self._citations[key], title=best, placeholder=True
                )

    def final(self, pending: Assertion | tuple[Assertion, str, str]) -> Assertion:
        """The assertion with its by-name endpoints replaced by their refs."""
        if isinstance(pending, Assertion):
            return pending
        a, src, dst = pending
        return replace(a, src=self._ref(src), dst=self._ref(dst))

    def _ref(self, pending: str) -> str:
        return self._final[pending] if pending.startswith("?") else pending

    def spellings(self) -> list[tuple[str, str]]:
        return [(s, self._final[f"?{key}"]) for key, counts in self._spellings.items() for s in counts]

    def claimed_names(self) -> list[tuple[str, str]]:
        """Names an aliases file (or PagerDuty) gives to another name: they answer where it does."""
        found = []
        for claim in self._claims:
            if not claim.target_is_name:
                continue
            ref = self._final.get(f"?{loose(claim.target)}") or match(self._alias_index(), claim.target).entity
            if ref:
                found.append((claim.alias, ref))
        return found


def _resolve_assertion(work: _Work, namer: _Namer, a: Assertion) -> Assertion | tuple[Assertion, str, str] | None:
    """The assertion with full refs, or (assertion, src, dst) whose by-name endpoints stay pending
    ("?key") until placeholders exist; None when it cannot be resolved.

    Assertions that need nothing are returned as they are: copying a million of them took 10 s.
    """
    if a.by_name:
        src = namer.ref_for(a.src, default_kind="component", citation=a.citation)
        dst_kind = "group" if a.rel == OWNED_BY else "component"
        dst = namer.ref_for(a.dst, default_kind=dst_kind, citation=a.citation)
        return None if src is None or dst is None else (a, src, dst)
    return _resolve_kindless(work, a) if a.kindless else a


def _resolve_kindless(work: _Work, a: Assertion) -> Assertion | None:
    forward = ":" in a.src
    loose_side = a.dst if forward else a.src
    namespace, name = loose_side.split("/", 1) if "/" in loose_side else ("default", loose_side)
    matches = [format_ref(k, namespace, name) for k in sorted(RUNTIME_KINDS)]
    found = [m for m in matches if m in work.entities and not work.entities[m].placeholder]
    if len(found) != 1:
        why = "no component or resource" if not found else f"both {' and '.join(found)}"
        work.kindless.append(
            Problem(
                a.citation.locator,
                f"kindless ref {loose_side!r} matches {why}; write it as component:{name} or resource:{name}",
                field="dependsOn",
                severity="error",
            )
        )
        return None
    work.kindless.append(
        Problem(a.citation.locator, f"kindless ref {loose_side!r} taken as {found[0]}", field="dependsOn")
    )
    src, dst = (a.src, found[0]) if forward else (found[0], a.dst)
    return Assertion(src, a.rel, dst, a.citation, via=a.via, held=a.held)


def _ensure_dangling(work: _Work, ref: str, citation: Citation) -> None:
    """A ref no source defines: keep it as a placeholder, so paths through it stay visible, and report it."""
    if ref in work.entities:
        return
    try:
        kind, namespace, name = split_ref(ref)
    except RefError:
        return
    work.entities[ref] = Entity(ref, kind, name, citation, namespace=namespace, placeholder=True)
    work.dangling.append(
        Problem(citation.locator, f"{ref} is referenced but defined in no source; kept as a placeholder")
    )


def _soft_pairs(work: _Work, index: AliasIndex) -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for ref, entity in stepping(work.entities.items()):
        for text in entity.annotations.get(SOFT_ANNOTATION, "").split(","):
            if not text.strip():
                continue
            target = _soft_target(work.entities, index, text.strip(), entity.namespace)
            if target is None:
                work.problems.append(
                    Problem(entity.citation.locator, f"{text.strip()!r} names no entity", field=SOFT_ANNOTATION)
                )
            else:
                pairs.add((ref, target))
    return pairs


def _soft_target(entities: Mapping[str, Entity], index: AliasIndex, text: str, namespace: str) -> str | None:
    try:
        kind, ns, name = split_ref(text, default_namespace=namespace)
    except RefError:
        return None
    kinds = [kind] if kind else sorted(RUNTIME_KINDS)
    found = [format_ref(k, ns, name) for k in kinds if format_ref(k, ns, name) in entities]
    if len(found) == 1:
        return found[0]
    return match(index, text).entity


class _Edges(NamedTuple):
    out_edges: dict[str, tuple[EdgeFacts, ...]]
    in_edges: dict[str, tuple[EdgeFacts, ...]]
    edge_count: int
    owned: list[EdgeFacts]  # the `owned_by` edges, for `_unknown_owners`, in no particular order


def _merge_edges(assertions: Iterable[Assertion], soft_pairs: set[tuple[str, str]]) -> _Edges:
    # Most edges are asserted once: keep the first assertion per edge, and a list only for an
    # edge asserted again (a list per edge cost 90 MB at a million edges).
    first: dict[tuple[str, str, str], Assertion | list[Assertion]] = {}
    for a in stepping(assertions):
        if a.src != a.dst and (found := first.setdefault(key := (a.src, a.rel, a.dst), a)) is not a:
            if isinstance(found, list):
                found.append(a)
            else:
                first[key] = [found, a]
    out_lists: dict[str, list[EdgeFacts]] = defaultdict(list)
    in_lists: dict[str, list[EdgeFacts]] = defaultdict(list)
    owned: list[EdgeFacts] = []
    # One `(citation,)` per citation, shared by the edges of its document: a tuple per edge was
    # a million more objects for the collector to walk (bench dense-100k). Keyed by id: every
    # assertion, so every citation, stays alive until the edges are built.
    alone: dict[int, tuple[Citation]] = {}
    any_soft = bool(soft_pairs)
    # A document's edges come together: its source's list and its citation looked up once.
    last_src: str | None = None
    last_out: list[EdgeFacts] = []
    last_citation: Citation | None = None
    cited: tuple[Citation] = ()  # type: ignore[assignment]  # set with last_citation
    for key, found in stepping(first.items()):
        src, rel, dst = key
        if isinstance(found, list):
            facts = _edge_facts(key, found, soft_pairs)
        else:
            # The common case, made here without the sets of `_edge_facts` (hashing a Citation runs
            # Python code: 2 s per million) nor a call of its own per edge.
            a = found
            if (citation := a.citation) is not last_citation:
                last_citation = citation
                cited = alone.get(id(citation)) or alone.setdefault(id(citation), (citation,))
            soft = any_soft and propagates(rel) and (src, dst) in soft_pairs
            via = (a.via,) if a.via else ()
            observed = citation.evidence == OBSERVED
            facts = new_edge_facts(src, rel, dst, cited, 1, citation.extracted, soft, via, observed)
        if src != last_src:
            last_src, last_out = src, out_lists[src]
        last_out.append(facts)
        in_lists[dst].append(facts)
        if rel == OWNED_BY:
            owned.append(facts)
    out_edges = {k: _sorted_by(v, _DST) for k, v in stepping(out_lists.items())}
    in_edges = {k: _sorted_by(v, _SRC) for k, v in stepping(in_lists.items())}
    return _Edges(out_edges, in_edges, len(first), owned)


# C-level keys (1 s less per million edges than lambdas), one field each.
_REL, _DST, _SRC = attrgetter("rel"), attrgetter("dst"), attrgetter("src")


def _sorted_by(edges: list[EdgeFacts], then: attrgetter[str]) -> tuple[EdgeFacts, ...]:
    """By relation, then by `then`: two stable sorts on one field each, the order one sort on
    (rel, then) gives, without a key tuple per edge (a quarter less at two million edges)."""
    edges.sort(key=then)
    edges.sort(key=_REL)
    return tuple(edges)


def _edge_facts(key: tuple[str, str, str], group: list[Assertion], soft_pairs: set[tuple[str, str]]) -> EdgeFacts:
    src, rel, dst = key
    soft = propagates(rel) and (src, dst) in soft_pairs
    citations = tuple(dict.fromkeys(a.citation for a in group))
    return EdgeFacts(
        src,
        rel,
        dst,
        citations=citations,
        weight=len({c.unit for c in citations}),
        extracted=all(c.extracted for c in citations),
        soft=soft,
        via=tuple(sorted({a.via for a in group if a.via})),
        observed=any(c.evidence == OBSERVED for c in citations),
    )


def _attach_deploys(
    work: _Work, index: AliasIndex, name_targets: Mapping[str, str], batches: Iterable[SourceFacts]
) -> tuple[dict[str, tuple[Deploy, ...]], list[Problem]]:
    by_entity: dict[str, dict[str, Deploy]] = defaultdict(dict)
    unresolved: list[Problem] = []
    targets: DeployTargetIndex | None = None
    for deploy in (d for batch in batches for d in batch.deploys):
        targets = targets or deploy_target_index(work.entities)  # only a graph with deploys needs it
        entity, problem = place_deploy(targets, index, name_targets, deploy)
        if entity is None:
            unresolved.append(problem)
            continue
        by_entity[entity][deploy.id] = deploy
    deploys = {ref: tuple(sorted(d.values(), key=lambda d: (d.deployed_at, d.id))) for ref, d in by_entity.items()}
    return deploys, unresolved


def _unknown_owners(entities: Mapping[str, Entity], edges: _Edges) -> tuple[Problem, ...]:
    """Each `owned_by` edge to an entity no source defines, in the order of the out-edges (their
    source's first edge, then the owner): found among the owned edges alone, not every edge."""
    unknown = [e for e in edges.owned if (owner := entities.get(e.dst)) is None or owner.placeholder]
    if not unknown:
        return ()
    position = {src: at for at, src in enumerate(edges.out_edges)}
    unknown.sort(key=lambda e: (position[e.src], e.dst))
    return tuple(Problem(str(e.citations[0]), f"{e.src} is owned by {e.dst}, which no source defines") for e in unknown)

"""Each ask answered for one named entity (or two, for a path): a section of plain sentences and the
cited edges they rest on. `graph.questions.ask` chooses which of these a question gets."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TypeVar

from graph import coverage
from graph.coverage import DEPENDENTS, nothing_found
from graph.edges import EdgeFacts
from graph.exposure.visibility import Viewer, visible
from graph.naming.refs import short_name
from graph.questions.sections import Section
from graph.questions.wording import CHANGES, DEPENDENCIES, IMPACT, OWNERSHIP, PATH
from graph.relations import propagates
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius
from graph.walks.paths import chain_text, find_path
from graph.walks.suspects import Dependency, suspects

T = TypeVar("T")

_VERB_RELATIONS = (
    ("publish", "publishes_to"),
    ("call", "calls"),
    ("read", "reads_from"),
    ("writ", "writes_to"),
    ("run", "runs_on"),
    ("back", "backed_by"),
    ("use", "uses"),
    ("consum", "consumes_api"),
)
_KIND_WORDS = (("api", "api"), ("database", "resource"), ("datastore", "resource"), ("queue", "resource"))
_DEPENDENCY_WORDS = re.compile(r"\b(depend|call|use|consum|relies|rely|publish|read|writ|runs on|backed|talk)")
# Hyphenated words are names (`data-audit-consumer`), and "on call" is no call: neither asks through a dependency.
_NOT_VERBS = re.compile(r"\S*[-_]\S*|\bon ?call\b")


def impact(snapshot: Snapshot, ref: str, viewer: Viewer, *, systems: bool = False) -> Section:
    result = blast_radius(snapshot, ref, viewer=viewer)
    name = short_name(ref)
    if not result.impacted:
        return Section(IMPACT, (ref,), (nothing_found(ref, DEPENDENTS, result.coverage),))
    breaks = [short_name(i.entity) for i in result.impacted if i.impact == "breaks"]
    degrades = [short_name(i.entity) for i in result.impacted if i.impact == "degrades"]
    sentences = [f"If {name} goes down, {join(breaks)} break{'s' if len(breaks) == 1 else ''}."] if breaks else []
    if degrades:
        sentences.append(f"{join(degrades)} degrade{'s' if len(degrades) == 1 else ''} (soft dependencies).")
    if result.hidden_count:
        sentences.append(f"{result.hidden_count} more impacted entities are not visible here.")
    if systems and result.systems:
        hit = sorted(result.systems, key=lambda s: (-s.impacted / s.total, -s.impacted, s.entity))
        parts = [f"{short_name(s.entity)} ({s.impacted} of {s.total} parts)" for s in hit]
        sentences.append(f"Systems most at risk if {name} fails: {join(parts)}.")
    if result.survives:
        sentences.append(f"Survives: {join([short_name(s) for s in result.survives])}.")
    edges = tuple(dict.fromkeys(e for i in result.impacted for e in i.edges))
    return Section(IMPACT, (ref,), tuple(sentences), edges)


def ownership(
    snapshot: Snapshot, ref: str, question: str, viewer: Viewer, *, through: bool = True, each: bool = False
) -> Section:
    """Owners of the entity, or, when the question asks through a dependency (and `through`), of what
    it depends on; with `each` (asked beside its dependencies), of the entity and then each direct one,
    every owner cited."""
    lowered = _NOT_VERBS.sub(" ", question.casefold())
    targets = [ref]
    via: list[EdgeFacts] = []
    if each:
        targets += [d.entity for d in _direct(snapshot, ref, viewer)]
    elif through and _DEPENDENCY_WORDS.search(lowered):
        deps = _direct(snapshot, ref, viewer)
        relations = [rel for verb, rel in _VERB_RELATIONS if verb in lowered]
        kinds = [kind for word, kind in _KIND_WORDS if word in lowered]
        deps = _narrowed(deps, lambda d: d.edges[-1].rel, relations)
        deps = _narrowed(deps, lambda d: d.entity.split(":")[0], kinds)
        targets = [d.entity for d in deps] or [ref]
        via = [e for d in deps for e in d.edges]
    went_through = not each and targets != [ref]
    sentences, edges = [], list(via)
    for target in targets:
        owners = visible(snapshot, snapshot.owners(target), viewer)
        sentences.append(_owner_sentence(target, owners))
        edges += [e for e in snapshot.out_edges.get(target, ()) if e.rel == "owned_by" and e.dst in owners]
        claimed = visible(snapshot, (c.owner for c in snapshot.owner_claims(target)), viewer)
        disputed = [owner for owner in claimed if owner not in owners]
        if disputed:
            sentences.append(
                f"Text also names {join([short_name(o) for o in disputed])} as owner of {short_name(target)}."
            )
    return Section(OWNERSHIP, (ref,), tuple(sentences), tuple(dict.fromkeys(edges)), through=went_through)


def _direct(snapshot: Snapshot, ref: str, viewer: Viewer) -> Sequence[Dependency]:
    return suspects(snapshot, ref, now=snapshot.built_at, max_depth=1, viewer=viewer).dependencies


def _narrowed(items: Sequence[T], key: Callable[[T], str], wanted: list[str]) -> Sequence[T]:
    """Keep the items whose key is wanted, unless that would leave nothing (then the words were loose)."""
    kept = [item for item in items if key(item) in wanted]
    return kept or items


def _owner_sentence(ref: str, owners: tuple[str, ...]) -> str:
    if not owners:
        return f"No source names an owner for {short_name(ref)}."
    return f"{short_name(ref)} is owned by {join([short_name(o) for o in owners])}."


def dependencies(
    snapshot: Snapshot,
    ref: str,
    now: datetime,
    window: timedelta,
    viewer: Viewer,
    *,
    owners: bool = False,
    deploys: bool = True,
) -> Section:
    """What `ref` depends on (with each one's owners when asked), and, unless the deploys have a section
    of their own (`deploys=False`), which were deployed in the window."""
    result = suspects(snapshot, ref, now=now, window=window, viewer=viewer)
    name = short_name(ref)
    if not result.dependencies:
        said = nothing_found(ref, coverage.DEPENDENCIES, result.coverage)
        return Section(DEPENDENCIES, (ref,), (said,), window=window)
    direct = [d for d in result.dependencies if d.hops == 1]
    listed = [f"{short_name(d.entity)} ({_owners(d.owners)})" if owners else short_name(d.entity) for d in direct]
    sentences = [f"{name} depends on {join(listed)}."]
    edges = tuple(dict.fromkeys(e for d in result.dependencies for e in d.edges))
    if not deploys:
        return Section(DEPENDENCIES, (ref,), tuple(sentences), edges, window)
    sentences += _deploy_sentences(result.dependencies)
    for suspect in result.own_deploys:
        sentences.append(f"{name} itself was deployed: {suspect.deploy.id} at {suspect.deploy.deployed_at:%H:%M} UTC.")
    if len(sentences) == 1:
        sentences.append(f"None of them was deployed in the last {duration(window)}.")
    return Section(DEPENDENCIES, (ref,), tuple(sentences), edges, window)


def changes(snapshot: Snapshot, ref: str, now: datetime, window: timedelta, viewer: Viewer) -> Section:
    """Deploys in the window of `ref` itself and of what it depends on."""
    result = suspects(snapshot, ref, now=now, window=window, viewer=viewer)
    name = short_name(ref)
    sentences = [
        f"{name} itself was deployed: {s.deploy.id} {s.deploy.version} at {s.deploy.deployed_at:%Y-%m-%d %H:%M} UTC."
        for s in result.own_deploys
    ]
    sentences += _deploy_sentences(result.dependencies)
    if not sentences:
        nothing = f"Neither {name} nor what it depends on was deployed in the last {duration(window)}."
        return Section(CHANGES, (ref,), (nothing,), window=window)
    edges = tuple(dict.fromkeys(e for d in result.dependencies if d.deploys for e in d.edges))
    return Section(CHANGES, (ref,), tuple(sentences), edges, window)


def _deploy_sentences(deps: Sequence[Dependency]) -> list[str]:
    sentences = []
    for dep in deps:
        for suspect in dep.deploys:
            d = suspect.deploy
            sentences.append(
                f"{short_name(dep.entity)} ({_owners(dep.owners)}) was deployed: {d.id} {d.version} at"
                f" {d.deployed_at:%Y-%m-%d %H:%M} UTC — suspect, {suspect.reason}."
            )
    return sentences


def _owners(owners: Sequence[str]) -> str:
    return join([short_name(o) for o in owners]) or "no known owner"


def path(snapshot: Snapshot, a: str, b: str, viewer: Viewer) -> Section:
    """The chain between two entities; a direct edge from `a` to `b` is said to be one."""
    direct = [e for e in snapshot.out_edges.get(a, ()) if e.dst == b and (propagates(e.rel) or e.rel == "owned_by")]
    found = find_path(snapshot, a, b, viewer=viewer)
    if not found.path:
        return Section(PATH, (a, b), (f"The graph has no chain of edges between {short_name(a)} and {short_name(b)}.",))
    chain = chain_text(found, short_name)
    if direct and len(found.path) == 2:
        return Section(PATH, (a, b), (f"Yes: {chain}.",), found.edges)
    return Section(PATH, (a, b), (f"{short_name(a)} and {short_name(b)} are linked: {chain}.",), found.edges)


def join(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def duration(window: timedelta) -> str:
    hours = window.total_seconds() / 3600
    if hours >= 48 and hours % 24 == 0:
        return f"{hours / 24:g} days"
    if hours >= 1:
        return "1 hour" if hours == 1 else f"{hours:g} hours"
    minutes = window.total_seconds() / 60
    return "1 minute" if minutes == 1 else f"{minutes:g} minutes"

"""One sync: gather every source, decide per source, apply, rebuild, swap. The imperative shell.

Per source: unchanged since its last success -> not parsed; failed -> last good facts kept and the
error recorded; would drop more than `max_drop` of its entities -> held for an admin; else its facts
are replaced in one transaction. Then the snapshot is rebuilt from all stored facts and swapped in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from graph.build import build_snapshot
from graph.facts import CallCount, Problem, SourceFacts, SourceMark
from graph.observed import is_trace_source
from graph.snapshot import Snapshot, SnapshotRef
from sync.collector import collector_paused
from sync.deltas import DELTA, REBUILD, Delta, Update, deploy_delta
from sync.kept_files import keep_unread_files
from sync.read_isolation import Read, SourceRead, failure_text, read_all
from sync.sources.registry import SourceAccess, SourceSpec
from sync.store.fact_codec import EncodedFacts
from sync.store.fact_store import Store, SyncRun, in_graph, source_marks
from sync.store.reviews import ReviewStore

log = logging.getLogger(__name__)
Clock = Callable[[], datetime]

APPLIED, UNCHANGED, FAILED, HELD = "applied", "unchanged", "failed", "held"
DEFAULT_MAX_DROP = 0.5
FIRST_PROBLEMS = 3  # what a failed source's recorded error shows (lint lists it)
LOGGED_PROBLEMS = 200  # new problems of one applied read written to the log; the rest counted
DEFAULT_ACCESS = SourceAccess()


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    name: str
    outcome: str
    error: str = ""
    items: int = 0
    added: int = 0
    retired: int = 0
    problems: int = 0
    seconds: float = 0.0  # wall time of reading and storing it (a monotonic measure, not the injected clock)


@dataclass(frozen=True, slots=True)
class SyncReport:
    outcomes: tuple[SourceOutcome, ...]
    version: int
    snapshot: Snapshot | None
    update: Update | None = None  # how the snapshot was brought up, when the graph moved

    @property
    def changed(self) -> bool:
        return any(o.added or o.retired for o in self.outcomes)  # a failing source may apply its other files


def sync_once(
    specs: Sequence[SourceSpec],
    store: Store,
    ref: SnapshotRef,
    clock: Clock,
    *,
    max_drop: float = DEFAULT_MAX_DROP,
    access: SourceAccess = DEFAULT_ACCESS,
    replica: str = "",
    swap: bool = True,
) -> SyncReport:
    """Read every source into the store, then rebuild and swap the snapshot when anything moved.

    `swap=False` only stores (a one-off `oncall-graph sync` answers nothing, so builds nothing).
    """
    reads = read_sources(specs, store, clock, access=access)
    return apply_reads(specs, reads, store, ref, clock, max_drop=max_drop, replica=replica, swap=swap)


def read_sources(
    specs: Sequence[SourceSpec], store: Store, clock: Clock, *, access: SourceAccess = DEFAULT_ACCESS
) -> dict[str, SourceRead]:
    """Every source read, each under its deadline, and nothing stored: the slow half of a sync,
    which the sync service runs holding no lock (a push's refresh must not wait for a slow feed)."""
    for spec in specs:
        store.ensure_source(spec.name, spec.kind, spec.location)
    previous = {name: state.content_version for name, state in store.source_states().items()}
    return read_all(specs, previous, access, clock)


def apply_reads(
    specs: Sequence[SourceSpec],
    reads: Mapping[str, SourceRead],
    store: Store,
    ref: SnapshotRef,
    clock: Clock,
    *,
    max_drop: float = DEFAULT_MAX_DROP,
    replica: str = "",
    swap: bool = True,
) -> SyncReport:
    """Store what `read_sources` read, source by source, then bring the snapshot up to date."""
    outcomes = []
    for spec in specs:
        read, timer = reads[spec.name], time.perf_counter()
        outcome = _sync_source(spec, store, read.result, clock, max_drop)
        outcome = replace(outcome, seconds=read.seconds + time.perf_counter() - timer)
        store.record_run(
            SyncRun(
                spec.name,
                read.started,
                clock(),
                outcome.outcome,
                outcome.items,
                outcome.added,
                outcome.retired,
                error=outcome.error,
                replica=replica,
            )  # fmt: skip
        )
        outcomes.append(outcome)
    # An applied read that added and retired nothing (a re-walked API) leaves the graph as it was.
    changed = any(o.added or o.retired for o in outcomes)
    version = store.graph_version()  # each applied change moved it in its own transaction
    names = [s.name for s in specs]
    current = ref.current()
    if not swap:
        return SyncReport(tuple(outcomes), version, None)
    if changed or current is None:
        # A polled feed that only added or retired deploys joins as a delta; anything else rebuilds.
        update = bring_up(store, current, version, names, clock)
        if update.snapshot is not None:
            ref.swap(update.snapshot)
        return SyncReport(tuple(outcomes), version, update.snapshot, update)
    # Nothing new to walk: only the freshness marks moved, so keep the built graph.
    states = store.source_states()
    marks = source_marks(states[n] for n in in_graph(names, states) if n in states)
    snapshot = current.with_marks(marks, calls=fresh_calls(store, current, marks, names))
    ref.swap(snapshot)
    return SyncReport(tuple(outcomes), version, snapshot)


def _sync_source(
    spec: SourceSpec, store: Store, read: Read | None | Exception, clock: Clock, max_drop: float
) -> SourceOutcome:
    if isinstance(read, Exception):
        error = failure_text(read)
        log.warning("source %s failed; keeping its last good facts: %s", spec.name, error, extra={"source": spec.name})
        store.record_failure(spec.name, at=clock(), error=error)
        return SourceOutcome(spec.name, FAILED, error=error)
    if read is None:
        store.record_unchanged(spec.name, at=clock())
        return SourceOutcome(spec.name, UNCHANGED)
    facts, version = read
    before = store.live_fact_count(spec.name)
    kept = keep_unread_files(spec, facts, fact_count(facts), before, lambda: store.live_rows(spec.name))
    facts = kept.facts
    count = fact_count(facts)
    wrong = [p for p in facts.problems if not p.note]  # a folder of mkdocs.yml alone is empty, not broken
    if count == 0 and wrong:
        # Nothing usable and something wrong: a broken source, not an empty one.
        shown = "; ".join(str(p) for p in wrong[:FIRST_PROBLEMS])
        more = f" (and {len(wrong) - FIRST_PROBLEMS} more)" if len(wrong) > FIRST_PROBLEMS else ""
        error = f"no usable facts; first problems: {shown}{more}"
        log.warning("source %s failed; keeping its last good facts: %s", spec.name, error, extra={"source": spec.name})
        store.record_failure(spec.name, at=clock(), error=error)
        return SourceOutcome(spec.name, FAILED, error=error, problems=len(facts.problems))
    if _drops_too_much(before, count, max_drop):
        reason = f"would drop {before - count} of {before} facts (limit {max_drop:.0%})"
        log.warning("source %s held for review: %s", spec.name, reason, extra={"source": spec.name})
        store.hold(spec.name, facts, at=clock(), version=version, reason=reason)
        return SourceOutcome(spec.name, HELD, error=reason, items=count)
    if kept.error:
        return _apply_keeping_files(spec, store, facts, clock, kept.error)
    applied = store.apply(spec.name, facts, at=clock(), version=version)
    _store_calls(spec, store, facts)
    log_new_problems(spec.name, applied.new_problems)
    return SourceOutcome(spec.name, APPLIED, "", applied.items, applied.added, applied.retired, len(facts.problems))


def _apply_keeping_files(
    spec: SourceSpec, store: Store, facts: SourceFacts | EncodedFacts, clock: Clock, error: str
) -> SourceOutcome:
    """Apply a read in which some files kept their last good facts; the source fails until they read.

    No content version is stored, so the next sync reads it again rather than calling it unchanged.
    """
    applied = store.apply(spec.name, facts, at=clock(), version="")
    _store_calls(spec, store, facts)
    log_new_problems(spec.name, applied.new_problems)
    log.warning("source %s: %s", spec.name, error, extra={"source": spec.name})
    store.record_failure(spec.name, at=clock(), error=error)
    return SourceOutcome(
        spec.name, FAILED, error, applied.items, applied.added, applied.retired, len(facts.problems)
    )  # fmt: skip


def fresh_calls(
    store: Store, current: Snapshot, marks: Mapping[str, SourceMark], names: Sequence[str] | None
) -> Mapping[str, CallCount]:
    """The call counts for a snapshot whose marks move: read again only when a trace source applied a
    read since `current` (counts are stored at a good read only), else `current`'s, so a follow tick
    does not read every count row (200k at 100k entities) to find them as they were."""
    moved = any(
        is_trace_source(name) and (name not in current.marks or current.marks[name].last_success != mark.last_success)
        for name, mark in marks.items()
    )
    return store.load_calls(names or None) if moved else current.calls


def _store_calls(spec: SourceSpec, store: Store, facts: SourceFacts | EncodedFacts) -> None:
    """A trace source's counts, beside its facts: stored at every good read, even when its edges
    did not change (the snapshot then takes them without a rebuild)."""
    if is_trace_source(spec.name) and isinstance(facts, SourceFacts):
        store.replace_calls(spec.name, facts.calls)


def log_new_problems(name: str, problems: Sequence[Problem]) -> None:
    """One warning per problem a source's applied read holds that the one before did not: a skipped
    symlink, a name Backstage refuses, a file that did not read is in the server's log once, when it
    appears, never again at every tick. Notes (YAML that is no descriptor) are only counted, by lint."""
    wrong = [p for p in problems if not p.note]
    for problem in wrong[:LOGGED_PROBLEMS]:
        log.warning("source %s: %s", name, problem, extra={"source": name})
    if len(wrong) > LOGGED_PROBLEMS:
        more = len(wrong) - LOGGED_PROBLEMS
        log.warning("source %s: and %d more new problems (oncall-graph lint lists them all)", name, more,
                    extra={"source": name})  # fmt: skip


def fact_count(facts: SourceFacts | EncodedFacts) -> int:
    # Passages count like the other stored facts: the store's live count, which a read is compared
    # with to catch a suspicious drop, holds them too.
    if isinstance(facts, EncodedFacts):
        return facts.count
    counted = (facts.entities, facts.assertions, facts.deploys, facts.aliases, facts.passages, facts.observations)
    return sum(map(len, counted))


def _drops_too_much(before: int, after: int, max_drop: float) -> bool:
    return before > 0 and (before - after) / before > max_drop


def load_snapshot(
    store: Store, clock: Clock, names: Sequence[str] | None = None, *, as_of: datetime | None = None
) -> Snapshot | None:
    """The snapshot from stored facts (only `names` when given); None when the store holds none."""
    # Read before the facts: the snapshot holds at least what this version holds (a delta that
    # would add a deploy it already has is refused by `with_deploys`, and the graph is rebuilt).
    version = store.graph_version() if as_of is None else -1
    # One pause from the first fact read to the built graph, then the current graph frozen: the
    # collector's first passes after a pause walked everything made in it (sync.collector).
    with collector_paused(freeze=as_of is None):
        batches: list[SourceFacts] = store.load_facts(as_of=as_of)
        states = store.source_states()
        wanted = in_graph(names, states)
        if names:
            batches = [b for b in batches if b.source in wanted]
        # Edges an admin approved belong to no configured source, so every graph carries them.
        if (reviewed := ReviewStore(store).approved_facts(as_of=as_of)) is not None:
            batches.append(reviewed)
        if not batches:
            return None
        marks = source_marks(s for s in states.values() if not names or s.name in wanted)
        # A past graph has its edges from history but no counts: those are kept as of the last read only.
        calls = store.load_calls(names or None) if as_of is None else {}
        return build_snapshot(batches, built_at=as_of or clock(), marks=marks, version=version, calls=calls)


def bring_up(store: Store, current: Snapshot | None, version: int, names: Sequence[str] | None, clock: Clock) -> Update:
    """`current` brought to graph `version` (read before): as a deploy delta when every step since
    changed deploys alone, else rebuilt from every fact, the reason kept for the log line."""
    began = time.perf_counter()
    if current is not None:
        delta = deploy_delta(store, current, version, names, clock)
        if isinstance(delta, Delta):
            return Update(delta.snapshot, DELTA, time.perf_counter() - began, delta.summary)
        why = f"no delta: {delta}"
    else:
        why = "no graph yet"
    snapshot = load_snapshot(store, clock, names)
    return Update(snapshot, REBUILD, time.perf_counter() - began, why)

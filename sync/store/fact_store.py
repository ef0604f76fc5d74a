"""The store: facts per source with their history, source marks, sync runs, the graph version,
handled events and lag alerts. SQLAlchemy Core lives here and in `sync/store/database.py` only.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain, groupby
from operator import itemgetter
from typing import TypeVar

from sqlalchemy import ColumnElement, Engine, Table, and_, func, insert, literal, or_, select, text, union_all, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from graph.facts import CallCount, Problem, SourceFacts, SourceMark
from graph.health.source_problems import SourceProblems
from sync.collector import collector_paused
from sync.store import schema
from sync.store.bulk_read import select_batches
from sync.store.bulk_write import insert_rows
from sync.store.fact_codec import ASSERTION, DEPLOY, PROBLEM, EncodedFacts, FactDecoder, Row, encode_rows
from sync.store.graph_changes import ChangedDeploys, changed_deploys, commit_change, open_change, step, step_moment
from sync.store.live_problems import live_problems
from sync.store.observed_calls import load_calls, replace_calls

log = logging.getLogger(__name__)
CHUNK = 5_000
# Rows one change adds or retires past which the store analyzes `facts` itself (PostgreSQL): until
# autovacuum's first analyze of a bulk sync the planner has no statistics, and it plans a delta's
# read of hundreds of change ids as a scan of every fact (2.1 s for a start behind at 100k).
ANALYZE_AFTER = 5_000
HELD_PROBLEMS_READ, HELD_PROBLEMS_KEPT = 500, 5  # a held read's problems shown beside it, of those read
PUSHED = "pushed"  # the kind of a source whose events are pushed in (webhooks) rather than read
SOURCE_LOCKS = 0x6F6E6301  # advisory lock space of per-source writers (sync/leader.py has the others)
ROW_COLUMNS = ("kind", "fact_key", "payload")  # a fact as the codec gives it: a `Row`
_KEY = itemgetter(1)
# Column getters that run in C: a Python loop over 600k rows to group them cost 0.2 s.
_SOURCE, _KIND_AND_PAYLOAD = itemgetter(0), itemgetter(1, 2)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SourceState:
    name: str
    kind: str
    location: str
    content_version: str = ""
    last_success: datetime | None = None
    last_attempt: datetime | None = None
    last_error: str = ""
    held_version: str = ""
    held_reason: str = ""
    stale: bool = False  # as last announced by a lag alert: stale, failing or held
    stale_changed_at: datetime | None = None
    held_problems: tuple[str, ...] = ()
    last_refused: str = ""
    last_refused_at: datetime | None = None

    def mark(self) -> SourceMark:
        return SourceMark(
            self.name, self.last_success, self.last_error, self.last_attempt, self.content_version, self.held_reason,
            self.held_problems,
            pushed=self.kind == PUSHED, last_refused=self.last_refused, last_refused_at=self.last_refused_at,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Applied:
    added: int
    retired: int
    items: int
    version: int | None = None  # the graph version it moved the store to; None when nothing changed
    new_problems: tuple[Problem, ...] = ()  # problems of the read not stored before: each said once


@dataclass(frozen=True, slots=True)
class SyncRun:
    source: str
    started_at: datetime
    finished_at: datetime
    outcome: str
    items: int = 0
    added: int = 0
    retired: int = 0
    content_version: str = ""
    error: str = ""
    replica: str = ""


def _utc(moment: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; everything we store is UTC.
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


class Store:
    """One engine; each method is one short transaction, safe to call from any thread."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # --- sources -------------------------------------------------------------------------
    def ensure_source(self, name: str, kind: str, location: str) -> None:
        with self.engine.begin() as conn:
            exists = conn.execute(select(schema.sources.c.name).where(schema.sources.c.name == name)).first()
            if exists is None:
                # Another replica may register it first; that is fine.
                with contextlib.suppress(IntegrityError):
                    conn.execute(insert(schema.sources).values(name=name, kind=kind, location=location))

    def source_states(self) -> dict[str, SourceState]:
        with self.engine.connect() as conn:
            return _source_states(conn)

    def record_failure(self, name: str, *, at: datetime, error: str) -> None:
        self._update_source(name, last_attempt=at, last_error=error)

    def record_unchanged(self, name: str, *, at: datetime) -> None:
        """The source reads as its applied version again: fresh, and any held change is moot."""
        with self.engine.begin() as conn:
            _lock_source(conn, name)
            conn.execute(
                update(schema.sources)
                .where(schema.sources.c.name == name)
                .values(last_attempt=at, last_success=at, last_error="", held_version="", held_reason="")
            )
            conn.execute(schema.held_facts.delete().where(schema.held_facts.c.source == name))

    def flip_stale(self, name: str, stale: bool, *, at: datetime) -> bool:
        """Record a stale/recovered transition; True only for the one caller (of any replica) that made it."""
        s = schema.sources
        with self.engine.begin() as conn:
            result = conn.execute(
                update(s).where(s.c.name == name, s.c.stale == (not stale)).values(stale=stale, stale_changed_at=at)
            )
            if result.rowcount != 1:
                return False
            state = "stale" if stale else "recovered"
            conn.execute(
                insert(schema.lag_alerts).values(
                    alert_key=f"{name}@{at.isoformat()}:{state}", source=name, state=state, sent_at=at
                )
            )
        return True

    def _update_source(self, name: str, **values: object) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(schema.sources).where(schema.sources.c.name == name).values(**values))

    # --- facts ---------------------------------------------------------------------------
    def live_fact_count(self, name: str) -> int:
        """Live facts of a source, problems aside: what a suspicious drop is measured against."""
        f = schema.facts
        with self.engine.connect() as conn:
            query = select(func.count()).where(f.c.source == name, f.c.kind != PROBLEM, f.c.valid_to.is_(None))
            return int(conn.execute(query).scalar_one())

    def live_rows(self, name: str) -> list[Row]:
        """A source's live facts as stored rows, problems aside: what a file that fails to read keeps."""
        f = schema.facts
        with self.engine.connect() as conn:
            query = select(f.c.kind, f.c.fact_key, f.c.payload).where(
                f.c.source == name, f.c.kind != PROBLEM, f.c.valid_to.is_(None)
            )
            return [(kind, key, payload) for kind, key, payload in conn.execute(query).all()]

    def live_problems(self) -> dict[str, SourceProblems]:
        """The problems of each source's applied read (junk documents, bad names, refused symlinks,
        unread files), counted, the first few kept: what the lag fronts show."""
        with self.engine.connect() as conn:
            return live_problems(conn)

    def retired_edge_count(self) -> int:
        """Edge facts (assertions) retired over the stored history, every source together."""
        f = schema.facts
        with self.engine.connect() as conn:
            query = select(func.count()).where(f.c.kind == ASSERTION, f.c.valid_to.is_not(None))
            return int(conn.execute(query).scalar_one())

    def apply(self, name: str, facts: SourceFacts | EncodedFacts, *, at: datetime, version: str) -> Applied:
        """Replace the source's live facts in one transaction: new ones start, missing ones retire."""
        with self.engine.begin() as conn:
            _lock_source(conn, name)
            applied = self._replace(conn, name, _encoded(facts), at)
            conn.execute(
                update(schema.sources)
                .where(schema.sources.c.name == name)
                .values(
                    content_version=version,
                    last_success=at,
                    last_attempt=at,
                    last_error="",
                    held_version="",
                    held_reason="",
                )  # fmt: skip
            )
            conn.execute(schema.held_facts.delete().where(schema.held_facts.c.source == name))
        self._analyze_after(applied)
        return applied

    def _analyze_after(self, applied: Applied) -> None:
        """Fresh planner statistics after a bulk change, as PostgreSQL advises after a bulk load (a user
        that does not own the table gets a server warning and no statistics: the change stands)."""
        if applied.added + applied.retired < ANALYZE_AFTER or self.engine.dialect.name != "postgresql":
            return
        try:
            with self.engine.begin() as conn:
                conn.exec_driver_sql("ANALYZE facts")
        except SQLAlchemyError as exc:  # a lost connection, a timeout: the change stands; autovacuum analyzes later
            log.warning(
                "could not analyze the facts table after %d changed rows: %s", applied.added + applied.retired, exc
            )

    def _replace(self, conn: Connection, name: str, rows: Sequence[Row], at: datetime) -> Applied:
        """Retire the live rows missing from `rows`, add the new ones, and, when anything changed,
        move the graph version in the same transaction, the rows tagged with the change."""
        f = schema.facts
        query = select(f.c.fact_key, f.c.id, f.c.kind).where(f.c.source == name, f.c.valid_to.is_(None))
        live = {key: (fact_id, kind) for key, fact_id, kind in conn.execute(query).all()}
        keys = set(map(_KEY, rows))
        added = _new_rows(rows, keys, live)
        retired = [(fact_id, kind) for key, (fact_id, kind) in live.items() if key not in keys]
        if not added and not retired:
            return Applied(0, 0, len(keys))
        change = open_change(conn, at=at, source=name)
        for chunk in _chunks([fact_id for fact_id, _ in retired]):
            conn.execute(update(f).where(f.c.id.in_(chunk)).values(valid_to=at, retired_in=change))
        insert_rows(conn, f, ROW_COLUMNS, added, same={"source": name, "valid_from": at, "added_in": change})
        kinds = {kind for _, kind in retired} | {row[0] for row in added}
        version = commit_change(conn, change, at=at, deploys_only=kinds == {DEPLOY})
        return Applied(len(added), len(retired), len(keys), version, _decoded_problems(name, added))

    def hold(self, name: str, facts: SourceFacts | EncodedFacts, *, at: datetime, version: str, reason: str) -> None:
        """Keep a suspicious change aside, unapplied, until an admin accepts it."""
        rows = _encoded(facts)
        with self.engine.begin() as conn:
            _lock_source(conn, name)
            conn.execute(schema.held_facts.delete().where(schema.held_facts.c.source == name))
            held = _new_rows(rows, set(map(_KEY, rows)), {})
            insert_rows(conn, schema.held_facts, ROW_COLUMNS, held, same={"source": name})
            conn.execute(
                update(schema.sources)
                .where(schema.sources.c.name == name)
                .values(held_version=version, held_reason=reason, last_attempt=at, last_error="")
            )

    def accept_held(self, name: str, *, at: datetime, actor: str) -> Applied | None:
        """Apply the held change of a source; None when nothing is held."""
        h = schema.held_facts
        with self.engine.begin() as conn:
            _lock_source(conn, name)
            state = conn.execute(select(schema.sources).where(schema.sources.c.name == name)).mappings().first()
            if state is None or not state["held_version"]:
                return None
            rows = conn.execute(select(h.c.kind, h.c.fact_key, h.c.payload).where(h.c.source == name)).all()
            applied = self._replace(conn, name, [(kind, key, payload) for kind, key, payload in rows], at)
            conn.execute(h.delete().where(h.c.source == name))
            conn.execute(
                update(schema.sources)
                .where(schema.sources.c.name == name)
                .values(content_version=state["held_version"], held_version="", held_reason="", last_success=at)
            )
            conn.execute(
                insert(schema.review_audit).values(
                    subject=f"source {name} version {state['held_version']}",
                    action="accept",
                    actor=actor,
                    at=at,
                    note=state["held_reason"],
                )  # fmt: skip
            )
        self._analyze_after(applied)
        return applied

    def replace_calls(self, name: str, calls: Sequence[CallCount]) -> None:
        """A trace source's call counts as of its last good read (beside its facts)."""
        replace_calls(self.engine, name, calls)

    def load_calls(self, names: Iterable[str] | None = None) -> dict[str, CallCount]:
        return load_calls(self.engine, None if names is None else set(names))

    def load_facts(self, *, as_of: datetime | None = None) -> list[SourceFacts]:
        """Live facts of every source, or the facts that were live at `as_of`."""
        f = schema.facts
        window: ColumnElement[bool]
        if as_of is None:
            window = f.c.valid_to.is_(None)
        else:
            window = and_(f.c.valid_from <= as_of, or_(f.c.valid_to.is_(None), f.c.valid_to > as_of))
        # In id order, with no ORDER BY source: both databases sort (source, id) at this size (SQLite
        # in a temporary B-tree, PostgreSQL on disk; bench: 0.6-0.8 s of a 100k-entity restart),
        # while id order is the table's own (SQLite's rowid) or its primary key's.
        query = select(f.c.source, f.c.kind, f.c.payload).where(window).order_by(f.c.id)
        decoders: dict[str, FactDecoder] = {}
        # Hundreds of thousands of kept objects: the collector's passes would cost more than the work.
        with collector_paused(), self.engine.connect() as conn:
            # Decoded as the driver hands them over, while their text is still in the cache; a
            # source's rows come in runs, one per sync that added some.
            for source, run in groupby(chain.from_iterable(select_batches(conn, query)), key=_SOURCE):
                decoder = decoders.get(source) or decoders.setdefault(source, FactDecoder(source))
                decoder.add(map(_KIND_AND_PAYLOAD, run))
            sources = _sorted_as_stored(conn, list(decoders))
        return [decoders[source].facts() for source in sources]

    # --- runs and the graph version -------------------------------------------------------
    def record_run(self, run: SyncRun) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(schema.sync_runs).values(**{k: getattr(run, k) for k in SyncRun.__slots__}))

    def recent_runs(self, limit: int = 50) -> list[SyncRun]:
        r = schema.sync_runs
        with self.engine.connect() as conn:
            rows = conn.execute(select(r).order_by(r.c.id.desc()).limit(limit)).mappings().all()
        return [SyncRun(**{k: row[k] for k in SyncRun.__slots__}) for row in rows]

    def graph_version(self) -> int:
        with self.engine.connect() as conn:
            version = conn.execute(select(schema.graph_state.c.version).where(schema.graph_state.c.id == 1)).scalar()
        return int(version or 0)

    def bump_version(self, *, at: datetime) -> int:
        """One version step that changed more than deploys (followers rebuild): e.g. an approved review."""
        with self.engine.begin() as conn:
            return step(conn, at=at)

    def deploy_changes(self, after: int, upto: int) -> tuple[ChangedDeploys | str, dict[str, SourceState]]:
        """The deploys the version steps (after, upto] added and retired, or why a rebuild must say;
        and, when there are some, the source states beside them: one connection
        (a follower takes this ten times a second under pushes; each checkout is a ping and a rollback)."""
        with self.engine.connect() as conn:
            changed = changed_deploys(conn, after, upto)
            return changed, ({} if isinstance(changed, str) else _source_states(conn))

    def step_moment(self, version: int) -> str | None:
        """When the graph moved to `version` (an image's key holds it); None when the store has no record."""
        with self.engine.connect() as conn:
            return step_moment(conn, version)

    # --- exactly-once claims ----------------------------------------------------------------
    def claim_event(self, key: str, *, at: datetime, replica: str = "") -> bool:
        """True for the first caller with this key, on any replica; False for every repeat."""
        return self._claim(schema.handled_events, {"event_key": key, "handled_at": at, "replica": replica})

    def claim_lag_alert(self, key: str, *, source: str, state: str, at: datetime) -> bool:
        return self._claim(schema.lag_alerts, {"alert_key": key, "source": source, "state": state, "sent_at": at})

    def _claim(self, table: Table, values: dict[str, object]) -> bool:
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(table).values(**values))
        except IntegrityError:
            return False
        return True


def _encoded(facts: SourceFacts | EncodedFacts) -> Sequence[Row]:
    """One row per fact; with the collector paused (its passes tripled the time at 600k facts)."""
    with collector_paused():
        return encode_rows(facts)


def _source_states(conn: Connection) -> dict[str, SourceState]:
    rows = conn.execute(select(schema.sources)).mappings().all()
    held = [r["name"] for r in rows if r["held_version"]]
    problems = _held_problems(conn, held) if held else {}
    return {
        r["name"]: SourceState(
            r["name"],
            r["kind"],
            r["location"],
            r["content_version"],
            _utc(r["last_success"]),
            _utc(r["last_attempt"]),
            r["last_error"],
            r["held_version"],
            r["held_reason"],
            bool(r["stale"]),
            _utc(r["stale_changed_at"]),
            problems.get(r["name"], ()),
            r["last_refused"] or "",
            _utc(r["last_refused_at"]),
        )  # fmt: skip
        for r in rows
    }


def _held_problems(conn: Connection, names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The first problems of each held read, errors (parts dropped) before warnings: why it was held."""
    h = schema.held_facts
    query = select(h.c.source, h.c.kind, h.c.payload).where(h.c.source.in_(names), h.c.kind == PROBLEM)
    decoders: dict[str, FactDecoder] = {}
    for source, run in groupby(conn.execute(query.order_by(h.c.id).limit(HELD_PROBLEMS_READ)), key=_SOURCE):
        decoders.setdefault(source, FactDecoder(source)).add(map(_KIND_AND_PAYLOAD, run))
    shown = {}
    for source, decoder in decoders.items():
        problems = sorted(decoder.facts().problems, key=lambda p: p.severity != "error")
        shown[source] = tuple(str(p) for p in problems[:HELD_PROBLEMS_KEPT])
    return shown


def _decoded_problems(name: str, rows: Iterable[Row]) -> tuple[Problem, ...]:
    decoder = FactDecoder(name)
    decoder.add((kind, payload) for kind, _, payload in rows if kind == PROBLEM)
    return decoder.facts().problems


def _new_rows(rows: Sequence[Row], keys: Set[str], live: Mapping[str, object]) -> Sequence[Row]:
    """The rows whose key is not live, each key once (its first row), in order."""
    if not live and len(keys) == len(rows):
        return rows  # a cold sync: no loop over 600k rows
    seen = set(live)
    added = []
    for row in rows:
        if row[1] not in seen:
            seen.add(row[1])
            added.append(row)
    return added


def _sorted_as_stored(conn: Connection, names: list[str]) -> list[str]:
    """Source names in the order ORDER BY source gives: the database's collation, not Python's."""
    if conn.dialect.name == "sqlite" or len(names) < 2:
        return sorted(names)  # SQLite's BINARY collation: code point order, as Python's
    column = schema.facts.c.source
    each = [select(literal(name, column.type).label(column.name)) for name in names]
    ordered = union_all(*each).order_by(column.name)
    return [name for (name,) in chain.from_iterable(select_batches(conn, ordered))]


def _lock_source(conn: Connection, name: str) -> None:
    """One writer per source at a time, until this transaction ends.

    A one-off `oncall-graph sync` (an admin's `--accept`) may run while the leader syncs the same
    source: without this, both would diff against the same live facts and insert the same rows
    twice. SQLite's BEGIN IMMEDIATE already serializes writers; PostgreSQL takes an advisory lock.
    """
    if conn.dialect.name == "postgresql":
        lock = text("SELECT pg_advisory_xact_lock(:space, hashtext(:name))")
        conn.execute(lock, {"space": SOURCE_LOCKS, "name": name})


def _chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def source_marks(states: Iterable[SourceState]) -> dict[str, SourceMark]:
    return {s.name: s.mark() for s in states}


def in_graph(names: Sequence[str] | None, states: Mapping[str, SourceState]) -> set[str]:
    """The configured sources plus every push source: pushed deploys belong to whichever graph is built."""
    return set(names or ()) | {name for name, state in states.items() if state.kind == PUSHED}

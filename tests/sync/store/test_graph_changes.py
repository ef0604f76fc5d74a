"""What each graph version step changed, on a real SQLite file and a real PostgreSQL server: the
steps are recorded with their facts, in one transaction, and read back as deploys by change id."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alembic import command
from alembic.config import Config
from sqlalchemy import insert, select, text

from graph.facts import Citation, Deploy, Entity, SourceFacts
from sync.store import schema
from sync.store.database import HEAD, MIGRATIONS, make_engine, migrate
from sync.store.fact_codec import encode_rows
from sync.store.fact_store import Store
from sync.store.graph_changes import ChangedDeploys, changed_deploys
from sync.store.pushed import Delivery, Stored, store_deliveries

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
FEED, CAT, PUSH = "deploys:feed", "catalog:cat", "webhook:deploys"


def deploy(source: str, number: int) -> Deploy:
    at = T0 + timedelta(minutes=number)
    return Deploy(f"d{number}", "auth", at, Citation(source, f"{source}:{number}", origin=f"deploy:d{number}"))


def store_pushed(store: Store, source: str, deploys: list[Deploy], *, at: datetime, delivery: str = "") -> Stored:
    """One delivery alone: a batch of one."""
    [stored] = store_deliveries(store, source, [Delivery(tuple(deploys), at, delivery)])
    return stored


def entity(name: str) -> Entity:
    return Entity(f"component:default/{name}", "component", name, Citation(CAT, f"{name}.yaml#1"))


def changes(store: Store) -> list[tuple[int, bool, str]]:
    c = schema.graph_changes
    with store.engine.connect() as conn:
        rows = conn.execute(select(c.c.version, c.c.deploys_only, c.c.source).order_by(c.c.version)).all()
    return [(int(v), bool(d), s) for v, d, s in rows]


def read(store: Store, after: int, upto: int) -> ChangedDeploys | str:
    with store.engine.connect() as conn:
        return changed_deploys(conn, after, upto)


def test_every_step_is_recorded_with_whether_it_changed_deploys_alone(store: Store) -> None:
    for name, kind in ((FEED, "deploys"), (CAT, "catalog"), (PUSH, "pushed")):
        store.ensure_source(name, kind, "x")
    assert store.apply(FEED, SourceFacts(FEED, deploys=(deploy(FEED, 1),)), at=T0, version="a").version == 1
    assert store.apply(CAT, SourceFacts(CAT, entities=(entity("auth"),)), at=T0, version="a").version == 2
    assert store.apply(FEED, SourceFacts(FEED, deploys=(deploy(FEED, 1),)), at=T0, version="b").version is None
    assert store_pushed(store, PUSH, [deploy(PUSH, 2)], at=T0, delivery="x").version == 3
    assert store_pushed(store, PUSH, [deploy(PUSH, 2)], at=T0, delivery="x").version == 3  # a redelivery
    store.bump_version(at=T0)
    assert changes(store) == [(1, True, FEED), (2, False, CAT), (3, True, PUSH), (4, False, "")]
    assert store.graph_version() == 4


def test_the_deploys_of_deploy_only_steps_are_read_by_their_change(store: Store) -> None:
    store.ensure_source(FEED, "deploys", "x")
    store.ensure_source(PUSH, "pushed", "x")
    many = tuple(deploy(FEED, n) for n in range(50))
    store.apply(FEED, SourceFacts(FEED, deploys=many), at=T0, version="a")  # version 1
    store.apply(FEED, SourceFacts(FEED, deploys=(*many[1:], deploy(FEED, 60))), at=T0, version="b")  # 2
    store_pushed(store, PUSH, [deploy(PUSH, 70)], at=T0)  # 3
    store.apply(FEED, SourceFacts(FEED, deploys=(*many[1:], deploy(FEED, 61))), at=T0, version="c")  # 4
    got = read(store, 1, 4)
    assert isinstance(got, ChangedDeploys)
    assert sorted(d.id for _, d in got.added) == ["d61", "d70"]  # d60 came and went within the steps
    assert [(s, d.id) for s, d in got.retired] == [(FEED, "d0")]
    assert (got.steps, got.rows) == (3, 4)  # d0, d60 (added and retired), d70, d61: not the 49 others
    assert read(store, 3, 4) == ChangedDeploys(((FEED, deploy(FEED, 61)),), ((FEED, deploy(FEED, 60)),), 1, 2)


def test_a_step_that_changed_more_than_deploys_or_is_unknown_is_refused(store: Store) -> None:
    store.ensure_source(FEED, "deploys", "x")
    store.ensure_source(CAT, "catalog", "x")
    store.apply(FEED, SourceFacts(FEED, deploys=(deploy(FEED, 1),)), at=T0, version="a")  # 1
    store.apply(CAT, SourceFacts(CAT, entities=(entity("auth"),)), at=T0, version="a")  # 2
    store.apply(FEED, SourceFacts(FEED, deploys=(deploy(FEED, 2),)), at=T0, version="b")  # 3
    assert "graph version 2 changed more than deploys (catalog:cat)" in str(read(store, 1, 3))
    assert isinstance(read(store, 2, 3), ChangedDeploys)
    assert "not after" in str(read(store, 3, 3))
    assert "not built from a graph version" in str(read(store, -1, 3))
    store.bump_version(at=T0)
    assert "graph version 4 changed more than deploys" in str(read(store, 3, 4))


def test_the_upgrade_from_0004_keeps_the_data_and_the_old_steps_read_as_missing(database_url: str) -> None:
    engine = make_engine(database_url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0004")
    rows = encode_rows(SourceFacts(FEED, deploys=(deploy(FEED, 1), deploy(FEED, 2))))
    with engine.begin() as conn:  # as 0004's code stored them: no change columns
        conn.execute(insert(schema.sources).values(name=FEED, kind="deploys", location="x"))
        for kind, key, payload in rows:
            conn.execute(
                text(
                    "INSERT INTO facts (source, kind, fact_key, payload, valid_from)"
                    " VALUES (:source, :kind, :key, :payload, :at)"
                ),
                {"source": FEED, "kind": kind, "key": key, "payload": payload, "at": T0},
            )
        conn.execute(insert(schema.graph_state).values(id=1, version=7, changed_at=T0))
    migrate(engine)
    store = Store(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
    [kept] = store.load_facts()
    assert [d.id for d in kept.deploys] == ["d1", "d2"] and store.graph_version() == 7
    # The next change is recorded; the steps before the upgrade are not, so a delta across them is refused.
    store.apply(FEED, SourceFacts(FEED, deploys=(deploy(FEED, 2), deploy(FEED, 3))), at=T0, version="b")
    assert "no record of what graph version 7 changed" in str(read(store, 6, 8))
    got = read(store, 7, 8)
    assert isinstance(got, ChangedDeploys)
    assert ([d.id for _, d in got.added], [d.id for _, d in got.retired]) == (["d3"], ["d1"])
    engine.dispose()


def test_deliveries_stored_together_make_one_step_and_each_its_own_answer(store: Store) -> None:
    store.ensure_source(PUSH, "pushed", "x")
    store_pushed(store, PUSH, [deploy(PUSH, 1)], at=T0, delivery="before")  # version 1
    batch = [
        Delivery((deploy(PUSH, 2), deploy(PUSH, 3)), T0 + timedelta(minutes=1), "one"),
        Delivery((deploy(PUSH, 1),), T0 + timedelta(minutes=2), "two"),  # an event stored before
        Delivery((deploy(PUSH, 3), deploy(PUSH, 4)), T0 + timedelta(minutes=3), "three"),  # d3 came with "one"
        Delivery((deploy(PUSH, 9),), T0 + timedelta(minutes=4), "one"),  # a redelivery of "one"
    ]
    answers = store_deliveries(store, PUSH, batch)
    assert [(a.added, a.repeated) for a in answers] == [
        (("d2", "d3"), ()), ((), ("d1",)), (("d4",), ("d3",)), ((), ("d9",))
    ]  # fmt: skip
    assert {a.version for a in answers} == {2} == {store.graph_version()}
    assert changes(store) == [(1, True, PUSH), (2, True, PUSH)]
    got = read(store, 1, 2)
    assert not isinstance(got, str) and sorted(d.id for _, d in got.added) == ["d2", "d3", "d4"]
    assert store.source_states()[PUSH].last_success == T0 + timedelta(minutes=4)

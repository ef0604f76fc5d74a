"""Delivery claims on a real SQLite file and a real PostgreSQL server: once-only, yet retried until delivered."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from sync.store.deliveries import CLAIMED, DELIVERED, FAILED, DeliveryClaims
from sync.store.fact_store import Store

T0 = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)
LEASE = timedelta(minutes=3)


def test_a_key_is_taken_once_while_its_answer_is_being_delivered(store: Store) -> None:
    one, two = DeliveryClaims(store, replica="one"), DeliveryClaims(store, replica="two")
    assert one.take("event:Ev1", at=T0)
    assert not two.take("event:Ev1", at=T0 + timedelta(seconds=5))
    assert one.state("event:Ev1") == CLAIMED


def test_a_delivered_answer_is_never_taken_again_even_after_the_lease(store: Store) -> None:
    claims = DeliveryClaims(store, lease=LEASE)
    assert claims.take("command:1.2.3", at=T0)
    claims.settle("command:1.2.3", delivered=True, at=T0 + timedelta(seconds=1))
    assert claims.state("command:1.2.3") == DELIVERED
    assert not claims.take("command:1.2.3", at=T0 + LEASE * 10)


def test_a_failed_answer_is_taken_by_the_next_retry_and_by_one_replica_only(store: Store) -> None:
    one, two = DeliveryClaims(store, replica="one"), DeliveryClaims(store, replica="two")
    assert one.take("event:Ev2", at=T0)
    one.settle("event:Ev2", delivered=False, at=T0 + timedelta(seconds=20))
    assert one.state("event:Ev2") == FAILED
    assert two.take("event:Ev2", at=T0 + timedelta(seconds=30))
    assert not one.take("event:Ev2", at=T0 + timedelta(seconds=31))
    two.settle("event:Ev2", delivered=True, at=T0 + timedelta(seconds=32))
    assert not one.take("event:Ev2", at=T0 + timedelta(seconds=33))


def test_a_claim_left_by_a_replica_that_stopped_is_taken_after_the_lease(store: Store) -> None:
    stopped, alive = DeliveryClaims(store, replica="stopped", lease=LEASE), DeliveryClaims(store, lease=LEASE)
    assert stopped.take("event:Ev3", at=T0)
    assert not alive.take("event:Ev3", at=T0 + LEASE - timedelta(seconds=1))
    assert alive.take("event:Ev3", at=T0 + LEASE + timedelta(seconds=1))


def test_a_key_claimed_the_old_way_counts_as_delivered(store: Store) -> None:
    assert store.claim_event("event:Old", at=T0)  # deploy deliveries and rows from before migration 0004
    claims = DeliveryClaims(store)
    assert claims.state("event:Old") == DELIVERED
    assert not claims.take("event:Old", at=T0 + LEASE * 2)


def test_racing_retries_of_a_failed_answer_have_one_winner(store: Store) -> None:
    DeliveryClaims(store).take("event:Ev4", at=T0)
    DeliveryClaims(store).settle("event:Ev4", delivered=False, at=T0)
    wins: list[bool] = []
    start = threading.Barrier(6)

    def retry(n: int) -> None:
        claims = DeliveryClaims(store, replica=f"r{n}")
        start.wait()
        wins.append(claims.take("event:Ev4", at=T0 + timedelta(seconds=10)))

    threads = [threading.Thread(target=retry, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 5 + [True]


def test_a_burst_of_claims_on_one_replica_each_answered_once_in_shared_transactions(store: Store) -> None:
    """50 commands at once, each retried once by Slack, one key already delivered: every command's
    key is won by exactly one of its two attempts, and the delivered one by none."""
    claims = DeliveryClaims(store, replica="one")
    assert claims.take("command:done", at=T0)
    claims.settle("command:done", delivered=True, at=T0)
    keys = [f"command:{n}" for n in range(50)] * 2 + ["command:done"]
    start = threading.Barrier(len(keys))
    wins: dict[str, int] = {}
    counted = threading.Lock()

    def attempt(key: str) -> None:
        start.wait()
        won = claims.take(key, at=T0 + timedelta(seconds=1))
        if won:
            claims.settle(key, delivered=True, at=T0 + timedelta(seconds=2))
        with counted:
            wins[key] = wins.get(key, 0) + won

    threads = [threading.Thread(target=attempt, args=(key,)) for key in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wins == {**{f"command:{n}": 1 for n in range(50)}, "command:done": 0}
    assert {claims.state(f"command:{n}") for n in range(50)} == {DELIVERED}

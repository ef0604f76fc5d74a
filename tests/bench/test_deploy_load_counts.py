"""The deploy load bench's count of redeliveries: one of each pair says `stored`, whichever was written first."""

from __future__ import annotations

from collections import Counter

from bench.deploy_load_bench import Posted, check_stored


def post(deploy_id: str, *, redelivery: bool, stored: bool) -> Posted:
    said = {"stored": [deploy_id], "repeated": []} if stored else {"stored": [], "repeated": [deploy_id]}
    return {"slot": 0, "id": deploy_id, "redelivery": redelivery, "status": 202, "latency": 0.01, **said}


def test_a_redelivery_written_before_its_original_still_counts_as_a_pair_stored_by_one() -> None:
    posted = [
        post("a", redelivery=False, stored=True), post("a", redelivery=True, stored=False),  # in order
        post("b", redelivery=False, stored=False), post("b", redelivery=True, stored=True),  # redelivery first
    ]  # fmt: skip
    counted = check_stored(posted, Counter({"a": 1, "b": 1}))
    assert counted["redeliveries_answered_repeated"] == 1 and counted["pairs_stored_by_one"] == 2
    assert counted["stored_once"] == 2 and not counted["answered_stored_twice"]


def test_a_pair_both_answered_stored_is_not_counted() -> None:
    posted = [post("c", redelivery=False, stored=True), post("c", redelivery=True, stored=True)]
    counted = check_stored(posted, Counter({"c": 2}))
    assert counted["pairs_stored_by_one"] == 0 and counted["answered_stored_twice"] == ["c"]
    assert counted["duplicates"] == ["c"]

"""What every entry point wires the same way: a snapshot is prepared before it serves."""

from __future__ import annotations

import gc

import pytest

from bot.wiring import StoreError, open_store, snapshot_ref
from graph.walks.compiled import walk_index
from tests.graph.shop import c, shop


def test_a_swapped_in_snapshot_serves_with_its_indexes_built_and_out_of_the_collector() -> None:
    ref, snapshot = snapshot_ref(), shop()
    try:
        gc.unfreeze()
        ref.swap(snapshot)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert ref.current() is snapshot
    # walks, the recent blast radii, restricted entities, their names, runbook sections, passages,
    # runtime kinds, systems, deploy targets, coverage, the live part's telemetry names and PagerDuty services
    assert len(snapshot.derived) == 12
    assert walk_index(snapshot).position[c("payments")] >= 0


def test_a_store_that_cannot_be_opened_is_named_without_its_password() -> None:
    with pytest.raises(StoreError, match="cannot open the database") as raised:
        open_store("postgresql://oncall:s3cret@127.0.0.1:1/oncall")  # nothing listens on port 1
    assert "oncall:***@127.0.0.1:1" in str(raised.value) and "s3cret" not in str(raised.value)
    with pytest.raises(StoreError, match="not a database URL"):
        open_store("::not a url::")

"""The collector is paused around a sync's bulk work and given back as the caller had it."""

from __future__ import annotations

import gc

import pytest

from sync.collector import collector_paused


def test_the_collector_is_off_inside_and_on_again_after_even_when_the_work_fails() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError, match="bad row"), collector_paused():
        raise ValueError("bad row")
    assert gc.isenabled()


def test_a_caller_that_had_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()

"""JSON from outside read within bounds: too deep becomes null, too many members are left out, the
rest is read as sent; valid JSON stays valid, anything else stays an error, and the scan is linear."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.bounded_json import MAX_DEPTH, MAX_MEMBERS, bounded, loads_bounded


def test_a_container_opened_past_the_depth_is_null_and_its_siblings_are_kept() -> None:
    assert bounded("[[[1,2]],3]", depth=2) == ("[[null],3]", True)
    assert bounded('{"a":{"b":{"c":1}},"d":"x"}', depth=2) == ('{"a":{"b":null},"d":"x"}', True)


def test_members_past_the_limit_are_left_out_of_arrays_and_objects_alike() -> None:
    assert bounded("[1,2,3,4,5]", members=3) == ("[1,2,3]", True)
    assert bounded('{"a":1,"b":[1,2,3],"c":3}', members=2) == ('{"a":1,"b":[1,2]}', True)


def test_brackets_and_commas_inside_strings_are_text() -> None:
    text = json.dumps({"a": "[[[,,,]]]{{", "b": ['"\\\\', "}"]})
    assert bounded(text, depth=2, members=2) == (text, False)


def test_what_is_within_the_bounds_passes_unchanged() -> None:
    text = json.dumps({"event": {"blocks": [{"elements": [{"text": "x"}]}] * 10}})
    assert bounded(text) == (text, False)


def test_an_alert_nested_five_thousand_deep_keeps_its_envelope() -> None:
    deep = '{"type":"context","elements":[' * 5000 + '"x"' + "]}" * 5000
    text = '{"event":{"channel":"C1","blocks":[' + deep + '],"ts":"1.2"},"type":"event_callback"}'
    value, cut = loads_bounded(text)
    assert cut and value["event"]["channel"] == "C1" and value["event"]["ts"] == "1.2"
    assert value["type"] == "event_callback"
    assert _depth(value) == MAX_DEPTH  # every level up to the bound kept, the one past it null


def _depth(value: object) -> int:
    if isinstance(value, dict):
        value = list(value.values())
    return 1 + max(map(_depth, value), default=0) if isinstance(value, list) else 0


def test_five_thousand_attachments_keep_the_first_and_whatever_follows_them() -> None:
    text = json.dumps({"event": {"attachments": [{"title": "t", "fields": []}] * 5000, "channel": "C1"}})
    value, cut = loads_bounded(text)
    assert cut and len(value["event"]["attachments"]) == MAX_MEMBERS and value["event"]["channel"] == "C1"


@pytest.mark.parametrize("text", ["{not json", "[" * 100_000, "[1,2", '{"a": [' + "[" * 40, '"open'])
def test_text_that_is_not_json_stays_an_error(text: str) -> None:
    with pytest.raises(ValueError):
        loads_bounded(text)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner, max_size=5),
                    max_leaves=40))  # fmt: skip
def test_any_json_value_stays_valid_json_with_its_first_members_in_place(value: object) -> None:
    kept, _cut = bounded(json.dumps(value), depth=3, members=2)
    assert _within(json.loads(kept), value, depth=3, members=2)


def _within(kept: object, value: object, *, depth: int, members: int) -> bool:
    """`kept` is `value` cut: containers past `depth` null, each container its first `members`."""
    if isinstance(value, list | dict) and depth == 0:
        return kept is None
    if isinstance(value, list):
        return (
            isinstance(kept, list)
            and kept == kept[:members]
            and len(kept) == min(len(value), members)
            and all(_within(k, v, depth=depth - 1, members=members) for k, v in zip(kept, value, strict=False))
        )
    if isinstance(value, dict):
        expected = list(value.items())[:members]
        return (
            isinstance(kept, dict)
            and list(kept) == [k for k, _ in expected]
            and all(_within(kept[k], v, depth=depth - 1, members=members) for k, v in expected)
        )
    return kept == value

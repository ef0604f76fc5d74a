"""Long loops step every so often on a paced thread, and nowhere else; a paced build is the same build."""

from __future__ import annotations

import threading

from graph.background import paced, step, stepping
from graph.warm import warm
from tests.graph.builders import dep, entity, snapshot


def test_a_paced_loop_steps_before_its_first_item_and_then_every_so_many() -> None:
    steps: list[int] = []
    seen: list[int] = []
    with paced(lambda: steps.append(len(seen))):
        for item in stepping(range(10), every=4):
            seen.append(item)
    assert seen == list(range(10))
    assert steps == [0, 4, 8]  # how many items had gone by at each step


def test_off_a_paced_block_a_step_does_nothing() -> None:
    steps: list[str] = []
    with paced(lambda: steps.append("in")):
        step()
    step()
    assert list(stepping(range(600))) == list(range(600))
    assert steps == ["in"]


def test_pacing_belongs_to_the_thread_that_set_it() -> None:
    """An answer on another thread, building an index, never waits for itself."""
    steps: list[str] = []

    def elsewhere() -> None:
        step()
        assert list(stepping(range(3))) == [0, 1, 2]

    with paced(lambda: steps.append(threading.current_thread().name)):
        other = threading.Thread(target=elsewhere, name="answer")
        other.start()
        other.join()
        step()
    assert steps == [threading.current_thread().name]


def test_a_paced_build_steps_and_builds_the_same_graph() -> None:
    refs = [f"component:default/svc-{i}" for i in range(300)]
    entities = [entity(ref) for ref in refs]
    edges = [dep(a, b) for a, b in zip(refs, refs[1:], strict=False)]
    steps: list[None] = []
    with paced(lambda: steps.append(None)):
        built = snapshot(entities, edges)
        warm(built)
    plain = snapshot(entities, edges)
    assert len(steps) > 10
    assert built.entities == plain.entities
    assert dict(built.out_edges) == dict(plain.out_edges)

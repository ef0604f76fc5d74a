"""The snapshot image round-trips the graph: a real sync of the acme example into a real database,
written to a real image file and read back, answers every question exactly as the built snapshot."""

from __future__ import annotations

import dataclasses
import gc
import io
import pickle
import pickletools
import subprocess
import sys
import weakref
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.render.json import blast_json, path_json, suspects_json
from graph.deploys.deploy_delta import with_deploys
from graph.facts import Citation, Deploy, Entity
from graph.snapshot import Snapshot
from graph.walks.blast import blast_radius
from graph.walks.paths import find_path
from graph.walks.suspects import suspects
from graph.warm import warm
from sync.refresh import load_snapshot
from sync.store.database import make_engine
from sync.store.fact_store import Store
from sync.store.image_maps import EdgesInto, PickledValues
from sync.store.image_pickling import ImagePickler
from sync.store.snapshot_image import ImageRejected, dumps, read_image, write_image
from tests.graph.test_snapshot_memory import Cycle

ACME = Path(__file__).resolve().parents[3] / "examples" / "acme"
NOW = datetime(2026, 11, 29, 16, 0, tzinfo=UTC)
KEY = {"database": "test", "graph_version": 1, "graph_moved": "then", "sources": [], "code": "c"}


@pytest.fixture
def built(database_url: str) -> Snapshot:
    flags = ["--catalog", str(ACME / "catalog"), "--deploys", str(ACME / "deploys.jsonl"),
             "--docs", str(ACME / "runbooks"), "--aliases", str(ACME / "aliases.yaml"),
             "--triples", str(ACME / "triples.json")]  # fmt: skip
    subprocess.run([sys.executable, "-m", "bot.cli", "--db", database_url, *flags, "sync"], check=True,
                   capture_output=True)  # fmt: skip
    engine = make_engine(database_url)
    snapshot = load_snapshot(Store(engine), lambda: NOW)
    engine.dispose()
    assert snapshot is not None and snapshot.entities and snapshot.deploys and snapshot.passages
    warm(snapshot)  # the image keeps the derived indexes too
    return snapshot


def answers(snapshot: Snapshot) -> object:
    refs = sorted(snapshot.entities)
    return (
        [suspects_json(r, suspects(snapshot, r, now=NOW, max_depth=4)) for r in refs],
        [blast_json(r, blast_radius(snapshot, r)) for r in refs],
        [path_json(find_path(snapshot, a, b)) for a in refs for b in refs if a != b],
    )


def test_a_round_tripped_snapshot_answers_as_the_built_one(built: Snapshot, tmp_path: Path) -> None:
    write_image(tmp_path / "graph.snapshot", KEY, built)
    loaded = read_image(tmp_path / "graph.snapshot", KEY)
    assert loaded is not built
    assert dict(loaded.entities) == dict(built.entities)
    assert dict(loaded.out_edges) == dict(built.out_edges) and dict(loaded.in_edges) == dict(built.in_edges)
    assert dict(loaded.deploys) == dict(built.deploys)
    assert (loaded.passages, loaded.held, loaded.problems, loaded.hygiene) == (
        built.passages, built.held, built.problems, built.hygiene)  # fmt: skip
    assert loaded.derived.keys() == built.derived.keys()
    assert answers(loaded) == answers(built)


def values(obj: object) -> list[object]:
    return [getattr(obj, f.name) for f in dataclasses.fields(obj)]  # type: ignore[arg-type]


def test_rebuilt_objects_are_whole_frozen_dataclasses(built: Snapshot) -> None:
    loaded = pickle.loads(dumps(built))
    for ref, entity in built.entities.items():
        again = loaded.entities[ref]
        assert type(again) is Entity and type(again.citation) is Citation
        assert values(again) == values(entity) and values(again.citation) == values(entity.citation)
        assert dict(again.annotations) == dict(entity.annotations)
    some = next(iter(loaded.entities.values()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        some.name = "changed"  # type: ignore[misc]
    assert dataclasses.replace(some, title="t").title == "t"


def test_entities_and_edges_stay_pickled_until_read(built: Snapshot, tmp_path: Path) -> None:
    write_image(tmp_path / "graph.snapshot", KEY, built)
    loaded = read_image(tmp_path / "graph.snapshot", KEY)
    assert isinstance(loaded.entities, PickledValues) and isinstance(loaded.in_edges, EdgesInto)
    assert list(loaded.entities) == list(built.entities)  # the order the build made, kept
    assert list(loaded.out_edges) == list(built.out_edges) and list(loaded.in_edges) == list(built.in_edges)
    assert "PickledValues(" in repr(loaded.entities) and " 0 read" in repr(loaded.entities)
    ref = next(iter(built.entities))
    assert ref in loaded.entities and "component:default/nothing-here" not in loaded.entities
    assert loaded.entities.get("component:default/nothing-here") is None
    assert loaded.entities[ref] is loaded.entities[ref]  # unpickled once
    # An edge read from either side is one object, as in the built snapshot.
    for dst, edges in loaded.in_edges.items():
        for edge in edges:
            assert any(edge is other for other in loaded.out_edges[edge.src])
            assert edge.dst == dst


def test_a_chunk_read_after_the_swap_is_frozen_with_the_rest_of_the_graph(built: Snapshot, tmp_path: Path) -> None:
    # Left in the collector's generations, a replica started from an image walked every chunk it
    # had read at each full pass (layered-10k: 74k objects, 40-65 ms with every thread stopped).
    write_image(tmp_path / "graph.snapshot", KEY, built)
    loaded = read_image(tmp_path / "graph.snapshot", KEY)
    try:
        gc.freeze()  # the swap's freeze: what the load made
        young = weakref.ref(Cycle())  # a request's garbage, not yet collected, when a chunk is read
        src = next(src for src, edges in built.out_edges.items() if edges)
        edge = loaded.out_edges[src][0]
        entity = loaded.entities[src]
        assert gc.is_tracked(edge) and gc.is_tracked(entity)
        tracked = {id(o) for o in gc.get_objects()}  # the frozen generation is not among them
        assert id(edge) not in tracked and id(entity) not in tracked
        assert young() is None  # the young generations were collected before the freeze
    finally:
        gc.unfreeze()


def test_a_deploy_joins_a_loaded_image_without_reading_its_entities(built: Snapshot, tmp_path: Path) -> None:
    # The first push after a restart: the deploy targets come warmed in the image, so placing it
    # reads no entity chunk (at 100k entities, unpickling them all took over a second).
    write_image(tmp_path / "graph.snapshot", KEY, built)
    loaded = read_image(tmp_path / "graph.snapshot", KEY)
    pushed = Deploy("gh-1", "payments", NOW, Citation("webhook:github", "delivery 1"), version="abc1234")
    fresh = with_deploys(loaded, added=[pushed], built_at=NOW)
    assert fresh is not None and pushed in fresh.deploys["component:default/payments"]
    assert " 0 read" in repr(loaded.entities)
    again = with_deploys(built, added=[pushed], built_at=NOW)
    assert again is not None and dict(fresh.deploys) == dict(again.deploys)


def test_a_loaded_snapshot_written_again_keeps_its_pickled_values(built: Snapshot, tmp_path: Path) -> None:
    write_image(tmp_path / "first.snapshot", KEY, built)
    loaded = read_image(tmp_path / "first.snapshot", KEY)
    loaded.entities[next(iter(loaded.entities))]  # partly read, as a serving process's is
    write_image(tmp_path / "again.snapshot", KEY, loaded)
    again = read_image(tmp_path / "again.snapshot", KEY)
    assert dict(again.entities) == dict(built.entities)
    assert dict(again.out_edges) == dict(built.out_edges) and dict(again.in_edges) == dict(built.in_edges)
    assert answers(again) == answers(built)


def test_slots_dataclasses_pickle_as_their_values_not_their_state() -> None:
    # The slow path set each one's state afterwards (BUILD: dataclasses' __setstate__, a field at a time).
    cited = Citation("catalog", "catalog/a.yaml#1", origin="catalog/a.yaml")
    entity = Entity("component:default/a", "component", "a", cited, annotations={"k": "v"})
    buffer = io.BytesIO()
    ImagePickler(buffer).dump((entity, cited))
    data = buffer.getvalue()
    opcodes = {op.name for op, _arg, _at in pickletools.genops(data)}
    assert "BUILD" not in opcodes and "REDUCE" in opcodes
    assert pickle.loads(data) == (entity, cited)


def test_an_image_of_another_key_is_rejected(built: Snapshot, tmp_path: Path) -> None:
    write_image(tmp_path / "graph.snapshot", KEY, built)
    with pytest.raises(ImageRejected, match="stale: graph_version 1, now 2"):
        read_image(tmp_path / "graph.snapshot", KEY | {"graph_version": 2})


def test_a_stale_image_is_judged_by_its_key_before_its_payload_is_read(built: Snapshot, tmp_path: Path) -> None:
    """A start behind pushed deploys meets a stale image first: it must not pay for reading and
    hashing all of it. Shown by a payload that is garbage: the key decides, not the digest."""
    path = tmp_path / "graph.snapshot"
    write_image(path, KEY, built)
    data = bytearray(path.read_bytes())
    data[-1000:] = bytes(1000)
    path.write_bytes(bytes(data))
    with pytest.raises(ImageRejected, match="stale: graph_version 1, now 2"):
        read_image(path, KEY | {"graph_version": 2})
    with pytest.raises(ImageRejected, match="checksum mismatch"):
        read_image(path, KEY)


def test_the_live_parts_names_are_kept_without_the_cache_answers_fill(built: Snapshot, tmp_path: Path) -> None:
    names = built.derived["graph.traffic.live.names"]
    found = names.ref("antifraud")
    assert found is not None and names._found  # an answer's look filled the cache
    write_image(tmp_path / "graph.snapshot", KEY, built)
    loaded = read_image(tmp_path / "graph.snapshot", KEY).derived["graph.traffic.live.names"]
    assert loaded._found == {} and loaded.ref("antifraud") == found
    assert names._found  # the served snapshot's cache is untouched

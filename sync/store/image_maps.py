"""The snapshot's big mappings as the image keeps them: values pickled a chunk of keys at a time,
unpickled when one of them is first read.

A restart's first answer reads a few entities and the edges of a few paths, not the 100k entities
and 400k edges an image holds: building every one of them was most of an image's load (layered-100k:
1.7 s of 2). Here a load makes one bytes object per chunk, and a value becomes the objects it was
(equal to them, by the image's pickling rules) the first time someone reads it, once.
"""

from __future__ import annotations

import copyreg
import io
import pickle
from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any

from graph.background import stepping
from graph.edges import EdgeFacts
from graph.snapshot import Snapshot
from sync.collector import keep_for_good
from sync.store.image_pickling import ImagePickler

CHUNK = 128  # keys pickled together: their classes and shared strings named once, not per key


class PickledValues(Mapping[str, Any]):
    """A read-only mapping whose values stay pickled, `CHUNK` keys together, until one of them is
    read. Safe across threads: two readers of one chunk may both unpickle it; the values first
    kept are the ones everyone gets."""

    __slots__ = ("_chunk_of", "_chunks", "_decoded")

    def __init__(self, chunk_of: dict[str, int], chunks: list[bytes]) -> None:
        self._chunk_of = chunk_of  # every key, in the mapping's order, and the chunk holding its value
        self._chunks = chunks  # each a pickled dict of its keys and values
        self._decoded: dict[str, Any] = {}

    @classmethod
    def of(cls, mapping: Mapping[str, Any]) -> PickledValues:
        if isinstance(mapping, PickledValues):
            return mapping  # loaded from an image and written again: its values are pickled already
        keys = list(mapping)
        # Chunk by chunk, these are most of an image's write: answers may go first between them.
        starts = stepping(range(0, len(keys), CHUNK), every=4)
        chunks = [_dumps({key: mapping[key] for key in keys[at : at + CHUNK]}) for at in starts]
        return cls({key: at // CHUNK for at, key in enumerate(keys)}, chunks)

    def __getitem__(self, key: str) -> Any:
        try:
            return self._decoded[key]
        except KeyError:
            pass
        values: dict[str, Any] = pickle.loads(self._chunks[self._chunk_of[key]])  # KeyError: not a key
        keep = self._decoded.setdefault
        for k, v in values.items():
            keep(k, v)
        keep_for_good()  # part of the graph from now on, as the rest of it is
        return self._decoded[key]

    def __contains__(self, key: object) -> bool:
        return key in self._chunk_of

    def __iter__(self) -> Iterator[str]:
        return iter(self._chunk_of)

    def __len__(self) -> int:
        return len(self._chunk_of)

    def __repr__(self) -> str:
        return f"PickledValues({len(self._chunk_of)} keys, {len(self._decoded)} read)"

    def __reduce__(self) -> tuple[Any, ...]:
        return PickledValues, (self._chunk_of, self._chunks)


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    ImagePickler(buffer).dump(value)
    return buffer.getvalue()


class EdgesInto(Mapping[str, tuple[EdgeFacts, ...]]):
    """A snapshot's `in_edges` as an image keeps them: each edge named by its source and its place
    among the source's `out_edges`, so an edge is pickled once and read as the same object both ways."""

    __slots__ = ("_decoded", "_places", "out")

    def __init__(self, out: Mapping[str, tuple[EdgeFacts, ...]], places: Mapping[str, tuple[Any, ...]]) -> None:
        self.out = out
        self._places = places  # dst -> (src, position in out[src], src, position, ...)
        self._decoded: dict[str, tuple[EdgeFacts, ...]] = {}

    @classmethod
    def of(
        cls, in_edges: Mapping[str, tuple[EdgeFacts, ...]], out_edges: Mapping[str, tuple[EdgeFacts, ...]]
    ) -> EdgesInto:
        """`in_edges` by their places in `out_edges` (the same edge objects, as a build makes them),
        read through `PickledValues.of(out_edges)`."""
        if isinstance(in_edges, EdgesInto) and in_edges.out is out_edges:
            return in_edges  # loaded from an image and written again
        place = {id(e): (src, at) for src, edges in stepping(out_edges.items()) for at, e in enumerate(edges)}
        places = {
            dst: tuple(chain.from_iterable(place[id(e)] for e in edges)) for dst, edges in stepping(in_edges.items())
        }
        return cls(PickledValues.of(out_edges), PickledValues.of(places))

    def __getitem__(self, key: str) -> tuple[EdgeFacts, ...]:
        found = self._decoded.get(key)
        if found is None:
            places, out = self._places[key], self.out
            found = self._decoded.setdefault(
                key, tuple(out[src][at] for src, at in zip(places[::2], places[1::2], strict=True))
            )
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._places

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def __reduce__(self) -> tuple[Any, ...]:
        return EdgesInto, (self.out, self._places)


class SnapshotPickler(ImagePickler):
    """The image's pickler for a whole snapshot: entities and edges deferred (`PickledValues`,
    `EdgesInto`), everything else unpickled at load."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is Snapshot:
            state = dict(vars(obj))  # a frozen dataclass with a __dict__: unpickling fills it back
            # A copy: a serving thread may add an index meanwhile, which would fail the pickling of
            # the dict itself ("changed size during iteration").
            state["derived"] = dict(obj.derived)
            in_edges = EdgesInto.of(obj.in_edges, obj.out_edges)
            state |= {"entities": PickledValues.of(obj.entities), "out_edges": in_edges.out, "in_edges": in_edges}
            return copyreg.__newobj__, (Snapshot,), state  # type: ignore[attr-defined]
        return super().reducer_override(obj)

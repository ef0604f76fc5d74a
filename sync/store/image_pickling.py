"""How the snapshot image pickles the graph: the rules `snapshot_image` hands its pickler.

A frozen slots dataclass pickles by default as its slots' state, which unpickling puts back through
the dataclass's `__setstate__`: `dataclasses.fields()` and an `object.__setattr__` per field, for
each of the entities, citations and edges (two thirds of a 10k image's load). Here each one is
reduced to `(rebuilt, (cls, *values))` instead, and `rebuilt` fills the slots through their own
descriptors from a constructor generated once per class: no fields() lookup, no __init__.
An image's key hashes graph/ (the classes' fields) but not this module: a change here that changes
the payload bumps `snapshot_image.FORMAT`.
"""

from __future__ import annotations

import copyreg
import dataclasses
import pickle
import threading
from collections.abc import Callable
from types import MappingProxyType
from typing import IO, Any

PROTOCOL = 5


def read_only(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


def rebuilt(cls: type[Any], *values: Any) -> Any:
    """An instance of the frozen slots dataclass `cls` with its fields, in order, set to `values`."""
    fill = _FILLERS.get(cls) or _filler(cls)
    return fill(*values)


_FILLERS: dict[type[Any], Callable[..., Any]] = {}


def _filler(cls: type[Any]) -> Callable[..., Any]:
    names = [f.name for f in dataclasses.fields(cls)]
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    namespace |= {f"set_{name}": vars(cls)[name].__set__ for name in names}  # the slots' own descriptors
    body = "".join(f"    set_{name}(made, {name})\n" for name in names)
    exec(f"def fill({', '.join(names)}):\n    made = new(cls)\n{body}    return made", namespace)
    fill: Callable[..., Any] = namespace["fill"]
    _FILLERS[cls] = fill
    return fill


def _slots_dataclass(cls: type[Any]) -> bool:
    params = cls.__dict__.get("__dataclass_params__")
    return params is not None and params.frozen and "__slots__" in cls.__dict__ and "__dict__" not in cls.__slots__


_UNSEEN: Any = object()


class ImagePickler(pickle.Pickler):
    """Protocol 5; slots dataclasses as value tuples, read-only mappings as the dicts they wrap, a
    lazy index's lock as a new one."""

    dispatch_table = copyreg.dispatch_table.copy()
    dispatch_table[MappingProxyType] = lambda proxy: (read_only, (dict(proxy),))
    dispatch_table[type(threading.Lock())] = lambda _lock: (threading.Lock, ())

    def __init__(self, file: IO[bytes], protocol: int = PROTOCOL) -> None:
        super().__init__(file, protocol=protocol)
        self._fields: dict[type[Any], tuple[str, ...] | None] = {}

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        names = self._fields.get(cls, _UNSEEN)
        if names is _UNSEEN:
            names = tuple(f.name for f in dataclasses.fields(cls)) if _slots_dataclass(cls) else None
            self._fields[cls] = names
        if names is None:
            return NotImplemented
        return rebuilt, (cls, *[getattr(obj, name) for name in names])

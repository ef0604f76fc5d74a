"""The garbage collector paused around the bulk work of a sync: reading a catalog, loading facts
from the store, building the snapshot. Process policy, kept out of `graph/`, which stays pure."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while building millions of objects that are all kept.

    Its full passes over every live object took half of a 100k-entity build (bench dense-100k:
    37 s with it, 21 s without) and a third of reading its catalog. Reference counting still
    frees everything; the collector is turned back on afterwards unless the caller had it off.

    `freeze`: what is alive at the end is frozen (`gc.freeze`) before the collector runs again.
    Everything made while paused stays in the young generation, and the next three passes walked
    it (a rebuild at 100k: 140-270 ms each, every thread stopped, beside the answers).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()


def keep_for_good() -> None:
    """Take the objects just made, which live as long as the graph they belong to, out of the
    collector's full passes, as `gc.freeze` at a swap took the rest of that graph.

    An image's chunks are unpickled when first read, after the swap froze what was loaded. Left
    to the collector, a replica started from an image walked them at every full pass: layered-10k,
    74k objects, 40-65 ms with every thread stopped, every ~20 s and more often under pushes (a
    replica that built its graph: 3k objects, 4-10 ms). The young generations are collected first
    (cheap), so the garbage frozen with them is at most the few cycles already old.
    """
    gc.collect(1)
    gc.freeze()

"""What every entry point (the server, the command line, the MCP server) wires the same way.

The composition roots import this module, never each other.
"""

from __future__ import annotations

import gc

from graph.snapshot import Snapshot, SnapshotRef
from graph.warm import warm


def prepare_to_serve(snapshot: Snapshot) -> None:
    """The process's policy for a new snapshot, before it serves: build every index answers use
    (no one's first query after a sync pays for them), then take the graph out of the collector."""
    warm(snapshot)
    # The collector's full passes walked every object of the graph, millions at 100k entities:
    # 1-2 s with every thread stopped, at moments no one chose (often the first query after a
    # restart). Frozen, the graph is skipped by those passes. It is still freed when replaced:
    # a snapshot holds no reference cycles, so reference counting frees it, frozen or not.
    gc.freeze()


def snapshot_ref() -> SnapshotRef:
    """The swap cell an entry point serves from: each snapshot swapped in is prepared first."""
    return SnapshotRef(prepare=prepare_to_serve)

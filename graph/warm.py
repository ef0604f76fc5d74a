"""Every index an answer uses, built at once: what a composition root runs on a new snapshot before
it serves (`SnapshotRef(prepare=...)`), so no one's first query after a sync pays for them."""

from __future__ import annotations

import importlib

from graph.coverage import coverage
from graph.deploys.deploy_targets import snapshot_deploy_targets
from graph.exposure.passages import passage_index
from graph.exposure.redaction import hidden_name_index, section_index
from graph.exposure.visibility import restricted_refs
from graph.snapshot import Snapshot
from graph.traffic.live import live_indexes
from graph.walks.blast import recent_walks, runtime_mask, system_parts
from graph.walks.compiled import walk_index

# What the walks import on first use (`graph.walks.compiled`): scipy, about 0.3 s of a start.
WALK_MODULES = ("scipy.sparse", "scipy.sparse.csgraph")


def load_walk_modules() -> None:
    """Import the walks' modules ahead of their first use: a start runs it on a thread of its own
    once its snapshot serves. A walk that comes first waits for it in the import system, which
    lets one thread import a module and holds the others until it is done."""
    for name in WALK_MODULES:
        importlib.import_module(name)


def warm(snapshot: Snapshot) -> None:
    """Walks (and where the recent blast radii are kept), visibility (and the names and sections it
    redacts), runbook passages, the blast radius's runtime kinds and systems, the looser name tiers,
    the coverage, the live part's names, and the deploy targets (kept in the snapshot image too, so
    the first pushed deploy after a restart does not read every entity to place it)."""
    index = walk_index(snapshot)
    for hard_only in (False, True):
        index.dependents(hard_only=hard_only)  # the walk's matrices (and scipy, loaded for them)
    recent_walks(snapshot)  # where the blast radii asked of it are kept, so no answer adds a key
    restricted_refs(snapshot)
    passage_index(snapshot)
    hidden_name_index(snapshot)
    section_index(snapshot)
    runtime_mask(snapshot)
    system_parts(snapshot)
    snapshot_deploy_targets(snapshot)
    coverage(snapshot)  # what an answer that finds nothing says the graph could know
    live_indexes(snapshot)  # telemetry names and PagerDuty services to entities, for what is failing now
    snapshot.aliases.tier("canonical")  # names typed loosely ("The Auth Service") are common in Slack

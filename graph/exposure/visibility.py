"""Who may see what: restricted entities are visible only in their allowed channels or to their
allowed users. Everyone else never sees their names — in paths, lists, owners or suggestions —
but walks still pass through them, so counts and chains stay true ("1 hidden entity").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph.naming.names import Resolution, resolve

if TYPE_CHECKING:
    from graph.snapshot import Snapshot

VISIBILITY = "oncall-graph/visibility"
ALLOWED_CHANNELS = "oncall-graph/allowed-channels"
ALLOWED_USERS = "oncall-graph/allowed-users"
HIDDEN = "(hidden)"
_RESTRICTED = f"{__name__}.restricted"  # this module's key in `Snapshot.derived`


@dataclass(frozen=True, slots=True)
class Viewer:
    """Where a question comes from. `everything` is for operators (the command line)."""

    channel: str = ""
    user: str = ""
    everything: bool = False


EVERYONE = Viewer(everything=True)


def _listed(value: str) -> set[str]:
    return {part.strip() for part in value.split(",") if part.strip()}


def can_see(snapshot: Snapshot, ref: str, viewer: Viewer) -> bool:
    if viewer.everything or ref not in restricted_refs(snapshot):
        return True
    annotations = snapshot.entities[ref].annotations
    return viewer.channel in _listed(annotations.get(ALLOWED_CHANNELS, "")) or viewer.user in _listed(
        annotations.get(ALLOWED_USERS, "")
    )


def restricted_refs(snapshot: Snapshot) -> frozenset[str]:
    """Entities annotated `oncall-graph/visibility: restricted`: found on first use, once per built graph."""
    found: frozenset[str] | None = snapshot.derived.get(_RESTRICTED)
    if found is None:
        found = snapshot.derived[_RESTRICTED] = frozenset(
            ref
            for ref, e in snapshot.entities.items()
            if e.annotations.get(VISIBILITY, "").strip().lower() == "restricted"
        )
    return found


def visible(snapshot: Snapshot, refs: Iterable[str], viewer: Viewer) -> tuple[str, ...]:
    return tuple(r for r in refs if can_see(snapshot, r, viewer))


def resolve_for(snapshot: Snapshot, text: str, viewer: Viewer) -> Resolution:
    """Resolve a name as this viewer may: restricted entities neither resolve nor are suggested."""
    if viewer.everything or not restricted_refs(snapshot):
        return resolve(snapshot.aliases, text)
    return resolve(snapshot.aliases, text, allow=lambda ref: can_see(snapshot, ref, viewer))


def resolve_first(snapshot: Snapshot, names: Sequence[str], viewer: Viewer, *, fallback: str) -> Resolution:
    """The first of `names` that names an entity (or several) for this viewer, else `fallback`'s
    resolution with its suggestions: an alert's service id, then its service name, for one."""
    for name in names:
        if name:
            resolution = resolve_for(snapshot, name, viewer)
            if resolution.entity or resolution.candidates:
                return resolution
    return resolve_for(snapshot, fallback, viewer)

"""What a person's teams own: the catalog's users that carry a Slack user id (Backstage's
`slack.com/bot-notify` annotation, the id its Slack notifications module sends to), the groups they
are members of, and the entities those groups, or the users themselves, own."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from graph.relations import MEMBER_OF, OWNED_BY
from graph.snapshot import Snapshot

SLACK_ID = "slack.com/bot-notify"
_BY_SLACK_ID = f"{__name__}.by_slack_id"  # this module's key in `Snapshot.derived`


def catalog_users(snapshot: Snapshot, slack_user: str) -> tuple[str, ...]:
    """The catalog users whose Slack id is `slack_user` (usually one), indexed once per built graph."""
    index: Mapping[str, tuple[str, ...]] | None = snapshot.derived.get(_BY_SLACK_ID)
    if index is None:
        found: dict[str, list[str]] = {}
        for ref, entity in snapshot.entities.items():
            slack_id = entity.annotations.get(SLACK_ID, "").strip() if entity.kind == "user" else ""
            if slack_id:
                found.setdefault(slack_id, []).append(ref)
        index = snapshot.derived[_BY_SLACK_ID] = {key: tuple(sorted(refs)) for key, refs in found.items()}
    return index.get(slack_user.strip(), ()) if slack_user.strip() else ()


def teams_of(snapshot: Snapshot, slack_user: str) -> tuple[str, ...]:
    """The groups the person is a member of, after the catalog users they are (who may own entities too)."""
    users = catalog_users(snapshot, slack_user)
    groups = [e.dst for user in users for e in snapshot.out_edges.get(user, ()) if e.rel == MEMBER_OF]
    return tuple(dict.fromkeys([*users, *sorted(groups)]))


def owned_by(snapshot: Snapshot, owners: Iterable[str]) -> tuple[str, ...]:
    """Every entity one of `owners` owns, by ref."""
    return tuple(sorted({e.src for owner in owners for e in snapshot.in_edges.get(owner, ()) if e.rel == OWNED_BY}))

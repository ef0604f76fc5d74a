"""An alert on a service, answered once for every front that shows one: the Slack alert thread and
the PagerDuty webhook post get the same suspects, blast radius, passages, phrasing and warning."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from datetime import datetime

from bot.query.bundle import AlertAnswer, AlertQuery, Resolved
from bot.query.live import LiveSource, begin, looked
from bot.query.model_phrasing import ModelPorts, explain_alert
from bot.render.freshness import freshness_of
from graph.exposure.passages import cite_passages
from graph.exposure.redaction import redact_text
from graph.exposure.visibility import Viewer, resolve_first
from graph.health.freshness import StalePolicy
from graph.snapshot import Snapshot
from graph.traffic.live import live_suspects
from graph.walks.blast import blast_radius
from graph.walks.suspects import suspects


def resolve_alert(snapshot: Snapshot, query: AlertQuery, viewer: Viewer) -> Resolved:
    """By PagerDuty service id (an alias of the entity carrying `pagerduty.com/service-id`), then by name."""
    names = (query.service_id, query.service_name)
    resolution = resolve_first(snapshot, names, viewer, fallback=query.name)
    hidden = resolution.entity is None and snapshot.aliases.names_one(query.name)
    return Resolved(resolution, named_elsewhere=hidden)


def shown_query(snapshot: Snapshot, query: AlertQuery, viewer: Viewer) -> AlertQuery:
    """The alert as this viewer may read it: a title or service name naming a hidden entity (typed by
    a person or set by a monitor) is replaced whole, so neither the reply nor the model repeats it."""
    return replace(
        query,
        service_id=redact_text(snapshot, query.service_id, viewer),
        service_name=redact_text(snapshot, query.service_name, viewer),
        title=redact_text(snapshot, query.title, viewer),
    )


def answer_alert(
    snapshot: Snapshot,
    query: AlertQuery,
    viewer: Viewer,
    now: datetime,
    policy: StalePolicy,
    model: ModelPorts | None = None,
    *,
    cpu: AbstractContextManager[object] | None = None,
    live: LiveSource | None = None,
) -> AlertAnswer:
    """The graph's parts run inside `cpu` (the bot's work slots); the model's network wait and the
    live look's do not."""
    cpu = cpu or nullcontext()
    pending = begin(live)
    with cpu:
        resolved = resolve_alert(snapshot, query, viewer)
        query = shown_query(snapshot, query, viewer)  # resolved as given, shown (and phrased) redacted
        freshness = freshness_of(snapshot, now, policy)
        if resolved.entity is None:
            return AlertAnswer(query, resolved, freshness)
        found = suspects(snapshot, resolved.entity, now=query.at or now, viewer=viewer)
        impact = blast_radius(snapshot, resolved.entity, viewer=viewer)
        quoted = cite_passages(snapshot, found.subjects(), viewer=viewer)
    present = looked(snapshot, pending, viewer)
    found = live_suspects(found, present)
    answered = AlertAnswer(query, resolved, freshness, found, impact, quoted, live=present)
    if model is None:
        return answered
    phrased = explain_alert(model, snapshot, found, impact, title=query.title, viewer=viewer, cpu=cpu)
    return replace(answered, phrasing=phrased.phrasing, fallback=phrased.fallback)

"""Deploys land on the entity their repository, PagerDuty integration or name says (CONTRACT "Deploys
to entities"), read from realistic feeds: tests/data/deploys/sockshop/README.md cites their fields."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from graph.build import build_snapshot
from graph.deploys.deploy_targets import (
    BY_KUBERNETES_ID,
    BY_NAME,
    BY_REPOSITORY,
    BY_ROUTING_KEY,
    BY_SOURCE_LOCATION,
    deploy_target,
    deploy_target_index,
    snapshot_deploy_targets,
    source_location_repository,
)
from graph.facts import Deploy
from graph.naming.names import resolve
from graph.snapshot import Snapshot
from sync.sources.catalog import read_catalog
from sync.sources.deploys import parse_deploys

DATA = Path(__file__).resolve().parents[2] / "data"
CATALOG = DATA / "catalog" / "sockshop" / "catalog"
FEEDS = DATA / "deploys" / "sockshop"
BUILT = datetime(2019, 5, 14, 12, tzinfo=UTC)


def feed(name: str) -> tuple[str, str]:
    return name, (FEEDS / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def shop() -> Snapshot:
    catalog = read_catalog("catalog", str(CATALOG))
    feeds = [parse_deploys(f"deploys:{name}", name, text) for name, text in map(feed, FEEDS_READ)]
    return build_snapshot([catalog, *feeds], built_at=BUILT)


FEEDS_READ = ("github_deployment_status.jsonl", "pagerduty_events.jsonl")


def deploys_of(snapshot: Snapshot, ref: str) -> list[Deploy]:
    return list(snapshot.deploys.get(ref, ()))


def test_github_deploy_lands_on_the_component_annotated_with_its_repository(shop: Snapshot) -> None:
    # carts-db's `system: carts` left a placeholder system:default/carts: it takes nothing
    assert shop.entities["system:default/carts"].placeholder
    [carts] = [d for d in deploys_of(shop, "component:default/carts") if d.id.startswith("gh-")]
    assert (carts.repository, carts.version, carts.git_ref) == ("microservices-demo/carts", "3e4f5a6", "main")
    assert "system:default/carts" not in shop.deploys
    [orders] = [d for d in deploys_of(shop, "component:default/orders") if d.id.startswith("gh-")]
    assert (orders.version, orders.git_ref) == ("a1b2c3d", "v0.4.7")


def test_monorepo_deploy_is_picked_among_the_entities_of_its_repository_by_service(shop: Snapshot) -> None:
    # front-end and edge-router share backstage.io/source-location .../edge: the payload's service picks
    [deploy] = deploys_of(shop, "component:default/front-end")
    assert deploy.repository == "microservices-demo/edge"
    assert deploys_of(shop, "component:default/edge-router") == []


def test_change_event_lands_through_its_routing_key_with_revision_and_user(shop: Snapshot) -> None:
    [change] = [d for d in deploys_of(shop, "component:default/orders") if d.id.startswith("pd-")]
    assert (change.version, change.actor, change.environment) == ("0.4.8", "carol", "production")
    assert change.service == "jenkins-prod-agent-7"  # payload.source named nothing; the key did


def test_change_event_with_an_unknown_key_falls_back_to_custom_details_service(shop: Snapshot) -> None:
    [change] = [d for d in deploys_of(shop, "component:default/carts") if d.id.startswith("pd-")]
    assert (change.version, change.actor) == ("1.2.0", "dave")


def test_alert_events_are_refused_line_by_line_saying_where_they_belong() -> None:
    facts = parse_deploys("pd", "pagerduty_events.jsonl", feed("pagerduty_events.jsonl")[1])

    refused = [p for p in facts.problems if p.field == "event_action"]
    assert [(p.where, p.severity) for p in refused] == [
        ("pagerduty_events.jsonl:2", "error"),
        ("pagerduty_events.jsonl:3", "error"),
    ]
    assert "alert event (event_action 'trigger')" in refused[0].message
    assert "/v2/enqueue" in refused[0].message and "change events" in refused[0].message
    assert "event_action 'resolve'" in refused[1].message
    assert all("samplekey" not in d.id and "orders-5xx" not in d.id for d in facts.deploys)
    assert len(facts.deploys) == 3


def test_unmatched_change_event_is_reported_without_its_routing_key(shop: Snapshot) -> None:
    [problem] = [p for p in shop.hygiene.unresolved_deploys if p.where == "pagerduty_events.jsonl:4"]
    assert "routing_key matches no pagerduty.com/integration-key" in problem.message
    assert "'cert-manager' names no entity" in problem.message
    assert "9a8b7c6d" not in problem.message  # the key is a credential
    assert len(shop.hygiene.unresolved_deploys) == 1


def test_a_placeholder_never_takes_a_name_from_a_defined_entity(shop: Snapshot) -> None:
    assert resolve(shop.aliases, "carts").entity == "component:default/carts"
    assert resolve(shop.aliases, "system:default/carts").entity == "system:default/carts"


def test_every_tier_in_order() -> None:
    snapshot = build_snapshot([read_catalog("catalog", str(CATALOG))], built_at=BUILT)
    index, aliases = deploy_target_index(snapshot.entities), snapshot.aliases

    def target(**fields: str) -> tuple[str | None, str]:
        found = deploy_target(index, aliases, **{"service": "", **fields})
        return found.entity, found.matched_by

    orders_key = "4f7c2b1a9d8e4c3fb6a5e0d1c2b3a4f5"
    # the repository beats a service name that names another entity
    orders = ("component:default/orders", BY_REPOSITORY)
    assert target(repository="Microservices-Demo/Orders.git", service="carts") == orders
    assert target(repository="shop/backend/payment") == ("component:default/payment", BY_REPOSITORY)
    assert target(repository="microservices-demo/edge", service="edge-router") == (
        "component:default/edge-router",
        BY_SOURCE_LOCATION,
    )
    assert target(routing_key=orders_key, service="carts") == ("component:default/orders", BY_ROUTING_KEY)
    assert target(service="storefront") == ("component:default/front-end", BY_KUBERNETES_ID)
    assert target(service="Front end") == ("component:default/front-end", BY_NAME)
    # a repository nobody annotated falls through to the name
    assert target(repository="someone/carts", service="carts") == ("component:default/carts", BY_KUBERNETES_ID)
    monorepo = deploy_target(index, aliases, repository="microservices-demo/edge", service="")
    assert monorepo.ambiguous
    assert monorepo.candidates == ("component:default/edge-router", "component:default/front-end")


@pytest.mark.parametrize(
    ("location", "repository"),
    [
        ("url:https://github.com/backstage/backstage/tree/master/plugins/catalog/", "backstage/backstage"),
        ("url:https://github.com/Owner/Repo", "owner/repo"),
        ("url:https://gitlab.com/group/sub/project/-/tree/main/app", "group/sub/project"),
        ("url:https://bitbucket.org/team/repo/src/main/", "team/repo"),
        ("url:https://github.com/owner", ""),
        ("file:./catalog-info.yaml", ""),
        ("", ""),
    ],
)
def test_source_location_gives_its_repository(location: str, repository: str) -> None:
    assert source_location_repository(location) == repository


def test_a_deploy_arriving_after_the_build_maps_through_the_snapshots_own_index(shop: Snapshot) -> None:
    found = deploy_target(
        snapshot_deploy_targets(shop), shop.aliases, service="carts", repository="microservices-demo/orders"
    )

    assert (found.entity, found.matched_by) == ("component:default/orders", BY_REPOSITORY)
    assert snapshot_deploy_targets(shop) is snapshot_deploy_targets(shop)  # built once per graph

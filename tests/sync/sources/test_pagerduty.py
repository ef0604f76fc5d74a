from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graph.build import build_snapshot
from graph.facts import Citation, Entity, Problem, SourceFacts
from graph.walks.blast import blast_radius
from sync.sources.pagerduty import (
    ACCEPT,
    BUSINESS,
    MAX_DEPTH,
    RETRIES,
    TECHNICAL,
    PagerDutyError,
    PagerDutyLocation,
    Relationship,
    ServiceRef,
    fetch_pagerduty,
    parse_location,
    parse_relationships,
    read_pagerduty,
)
from tests.fakes.pagerduty_api import TOKEN, PagerDutyApi, load_account, pagerduty_api

DATA = Path(__file__).resolve().parents[2] / "data" / "pagerduty"
DEPS = "/service_dependencies/technical_services/"
BIZ_DEPS = "/service_dependencies/business_services/"


def edges(facts: SourceFacts) -> set[tuple[str, str, str]]:
    return {(a.src, a.rel, a.dst) for a in facts.assertions}


def read(api: PagerDutyApi, query: str = "", *, token: str = TOKEN) -> SourceFacts:
    return read_pagerduty("pagerduty", api.url + query, token=token)


def catalog_entity(ref: str, service_id: str) -> Entity:
    kind, name = ref.split(":")[0], ref.split("/")[1]
    citation = Citation("catalog", f"catalog/{name}.yaml#1", origin=f"catalog/{name}.yaml#1")
    return Entity(ref, kind, name, citation, annotations={"pagerduty.com/service-id": service_id})


def chain_account(length: int) -> dict[str, Any]:
    """PS000 <- PS001 <- ... : each service depends on the one before it."""
    ids = [f"PS{n:03d}" for n in range(length)]
    relationships = [
        {
            "id": f"DS{n:03d}",
            "type": "service_dependency",
            "supporting_service": {"id": ids[n - 1], "type": "technical_service_reference"},
            "dependent_service": {"id": ids[n], "type": "technical_service_reference"},
        }
        for n in range(1, length)
    ]
    services = [{"id": sid, "type": "service", "name": f"Service {sid}"} for sid in ids]
    return {"services": services, "business_services": [], "relationships": relationships}


# --- parsing ------------------------------------------------------------------------------------


def test_reference_fixture_parses_into_supporting_and_dependent_services_of_each_kind() -> None:
    body = json.loads((DATA / "service_dependencies_PCART01.json").read_text(encoding="utf-8"))
    before = copy.deepcopy(body)

    relationships, problems = parse_relationships("pd", body)

    assert problems == ()
    assert relationships == (
        Relationship("D1", ServiceRef("PREDIS1", TECHNICAL), ServiceRef("PCART01", TECHNICAL)),
        Relationship("D2", ServiceRef("PCART01", TECHNICAL), ServiceRef("PBIZCHK", BUSINESS)),
    )
    assert body == before


def test_bad_relationship_entries_are_problems_naming_the_field_and_the_rest_are_kept() -> None:
    body = {
        "relationships": [
            "D0",
            {"id": "D1", "supporting_service": {"type": "technical_service_reference"}, "dependent_service": {}},
            {
                "supporting_service": {"id": "PA", "type": "service"},
                "dependent_service": {"id": "PB", "type": "business_service"},
            },
        ]
    }

    relationships, problems = parse_relationships("pd", body)

    assert relationships == (Relationship("PB>PA", ServiceRef("PA", TECHNICAL), ServiceRef("PB", BUSINESS)),)
    assert Problem("pd", "not an object", "relationships[0]", "error") in problems
    assert {(p.where, p.field, p.severity) for p in problems} >= {
        ("pagerduty:D1", "supporting_service.id", "error"),
        ("pagerduty:D1", "dependent_service.id", "error"),
        ("pd relationships[2]", "id", "warning"),
    }


def test_a_body_without_a_relationships_array_is_one_error_problem() -> None:
    assert parse_relationships("pd", {"service": {}}) == (
        (),
        (Problem("pd", "expected an object with a relationships array", "relationships", "error"),),
    )


def test_location_is_a_base_url_with_optional_seed_services() -> None:
    assert parse_location("https://pd.example.com/api/?services=PABC123, PDEF456&business_services=PBIZ") == (
        PagerDutyLocation("https://pd.example.com/api", ("PABC123", "PDEF456"), ("PBIZ",))
    )
    assert parse_location("") == PagerDutyLocation("https://api.pagerduty.com")
    assert parse_location("?services=P1") == PagerDutyLocation("https://api.pagerduty.com", ("P1",))


@pytest.mark.parametrize("location", ["https://api.pagerduty.com?service=P1", "?services=", "ftp://x/y"])
def test_a_mistyped_location_is_refused_rather_than_walking_the_whole_account(location: str) -> None:
    with pytest.raises(ValueError, match="PagerDuty location"):
        parse_location(location)


# --- the walk over HTTP -------------------------------------------------------------------------


def test_each_relationship_becomes_a_cited_by_name_depends_on_edge_between_service_ids() -> None:
    with pagerduty_api() as api:
        facts = read(api, "?services=PREDIS1")

    assert facts.problems == ()
    assert edges(facts) == {("PCART01", "depends_on", "PREDIS1"), ("PBIZCHK", "depends_on", "PCART01")}
    d1 = next(a for a in facts.assertions if a.dst == "PREDIS1")
    assert d1.by_name
    assert d1.citation == Citation("pagerduty", "pagerduty:D1", origin="pagerduty:D1")


def test_service_names_become_aliases_of_their_ids() -> None:
    with pagerduty_api() as api:
        facts = read(api, "?services=PREDIS1")

    claims = {(c.alias, c.target, c.target_is_name) for c in facts.aliases}
    assert claims == {("Redis", "PREDIS1", True), ("Shopping Cart", "PCART01", True), ("Checkout", "PBIZCHK", True)}
    assert next(c for c in facts.aliases if c.target == "PBIZCHK").citation.locator == "pagerduty:PBIZCHK"


def test_the_walk_is_breadth_first_one_request_at_a_time_with_token_and_v2_accept() -> None:
    with pagerduty_api() as api:
        read(api, "?services=PREDIS1")

    assert api.paths() == [
        DEPS + "PREDIS1",
        "/services/PREDIS1",
        DEPS + "PCART01",
        "/services/PCART01",
        BIZ_DEPS + "PBIZCHK",
        "/business_services/PBIZCHK",
    ]
    assert api.max_in_flight == 1
    assert {r.headers["Authorization"] for r in api.requests} == {f"Token token={TOKEN}"}
    assert {r.headers["Accept"] for r in api.requests} == {ACCEPT}


def test_blast_radius_through_the_build_reaches_the_cart_at_one_hop_and_the_business_service_at_two() -> None:
    catalog = SourceFacts(
        "catalog",
        entities=(
            catalog_entity("resource:default/redis", "PREDIS1"),
            catalog_entity("component:default/cart", "PCART01"),
        ),
    )
    with pagerduty_api() as api:
        facts = read(api, "?services=PREDIS1")

    snap = build_snapshot([catalog, facts], built_at=datetime(2026, 11, 29, tzinfo=UTC))
    impacted = {i.entity: i.hops for i in blast_radius(snap, "resource:default/redis").impacted}

    assert impacted == {"component:default/cart": 1, "component:default/pbizchk": 2}
    assert snap.entities["component:default/pbizchk"].placeholder
    [edge] = [e for e in snap.out_edges["component:default/cart"] if e.dst == "resource:default/redis"]
    assert [str(c) for c in edge.citations] == ["pagerduty:D1"]


def test_a_dependency_cycle_ends_with_each_service_read_once() -> None:
    with pagerduty_api() as api:
        facts = read(api, "?services=PAUTH01")

    assert edges(facts) == {
        ("PAUTH01", "depends_on", "PSESS01"),
        ("PSESS01", "depends_on", "PTOKEN1"),
        ("PTOKEN1", "depends_on", "PAUTH01"),
    }
    assert [api.hits(DEPS + sid) for sid in ("PAUTH01", "PSESS01", "PTOKEN1")] == [1, 1, 1]


def test_a_missing_service_is_a_problem_naming_its_id_and_the_walk_goes_on() -> None:
    with pagerduty_api() as api:
        facts = read(api, "?services=PGONE01,PREDIS1")

    [problem] = facts.problems
    assert "PGONE01" in problem.where
    assert "PGONE01" in problem.message
    assert "404" in problem.message
    assert ("PCART01", "depends_on", "PREDIS1") in edges(facts)


def test_a_service_over_pagerduty_limits_is_an_error_problem_and_the_walk_goes_on() -> None:
    with pagerduty_api() as api:
        too_many = {"error": {"message": "Invalid Input Provided", "errors": ["Too many dependencies (max 2000)"]}}
        api.answer_next(DEPS + "PCART01", 400, too_many)
        facts = read(api, "?services=PREDIS1")

    [problem] = facts.problems
    assert problem.severity == "error"
    assert "PCART01" in problem.message
    assert "Too many dependencies" in problem.message
    assert edges(facts) == {("PCART01", "depends_on", "PREDIS1")}


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_token_fails_the_whole_source_without_echoing_the_token(status: int) -> None:
    with pagerduty_api() as api:
        if status == 403:
            api.answer_next(DEPS + "PREDIS1", 403, {"error": {"message": "Access Denied", "code": 2010}})
            token = TOKEN
        else:
            token = "wrong-token-42"
        with pytest.raises(PagerDutyError, match=f"HTTP {status}") as raised:
            read(api, "?services=PREDIS1", token=token)

    assert token not in str(raised.value)
    assert "token" in str(raised.value)


def test_an_empty_token_is_refused_before_any_request() -> None:
    with pagerduty_api() as api, pytest.raises(PagerDutyError, match="no PagerDuty API token"):
        read(api, "?services=PREDIS1", token="  ")

    assert api.requests == []


def test_a_rate_limited_request_is_retried_after_the_wait_pagerduty_asks_for() -> None:
    waits: list[float] = []
    with pagerduty_api() as api:
        api.answer_next(DEPS + "PCART01", 429, {"error": {"message": "Rate Limit Exceeded"}}, {"Retry-After": "7"})
        api.answer_next(DEPS + "PCART01", 429, "", {"ratelimit-reset": "2"})
        graph = fetch_pagerduty(api.url + "?services=PREDIS1", token=TOKEN, sleep=waits.append)

    assert waits == [7.0, 2.0]
    assert api.hits(DEPS + "PCART01") == 3
    assert {r.id for r in graph.relationships} == {"D1", "D2"}
    assert graph.problems == ()


def test_a_rate_limited_read_succeeds_through_read_pagerduty() -> None:
    with pagerduty_api() as api:
        api.answer_next(DEPS + "PREDIS1", 429, "", {"Retry-After": "0"})
        facts = read(api, "?services=PREDIS1")

    assert api.hits(DEPS + "PREDIS1") == 2
    assert len(facts.assertions) == 2


def test_rate_limiting_that_never_ends_fails_the_source_after_a_few_retries() -> None:
    waits: list[float] = []
    with pagerduty_api() as api:
        for _ in range(RETRIES + 1):
            api.answer_next(DEPS + "PREDIS1", 429, "", {"Retry-After": "1"})
        with pytest.raises(PagerDutyError, match="HTTP 429.*after 3 retries"):
            fetch_pagerduty(api.url + "?services=PREDIS1", token=TOKEN, sleep=waits.append)

    assert waits == [1.0] * RETRIES
    assert api.hits(DEPS + "PREDIS1") == RETRIES + 1


def test_a_body_that_is_not_json_fails_the_source_with_a_clear_message() -> None:
    with pagerduty_api() as api:
        api.answer_next(DEPS + "PCART01", 200, "<html>maintenance</html>")
        with pytest.raises(PagerDutyError, match=r"PCART01: the answer is not JSON"):
            read(api, "?services=PREDIS1")


def test_an_unknown_reference_type_is_a_warning_and_the_relationship_is_still_used() -> None:
    account = load_account()
    account["relationships"][0]["supporting_service"]["type"] = "datastore_reference"
    with pagerduty_api(account) as api:
        facts = read(api, "?services=PCART01")

    [problem] = facts.problems
    assert (problem.where, problem.field, problem.severity) == ("pagerduty:D1", "supporting_service.type", "warning")
    assert "datastore_reference" in problem.message
    assert ("PCART01", "depends_on", "PREDIS1") in edges(facts)


def test_without_seeds_every_service_and_business_service_is_listed_page_by_page() -> None:
    with pagerduty_api(page_size=2) as api:
        facts = read(api)

    listed = [(r.path, r.query["offset"]) for r in api.requests if r.path in ("/services", "/business_services")]
    assert listed == [("/services", "0"), ("/services", "2"), ("/services", "4"), ("/business_services", "0")]
    assert {a.citation.locator for a in facts.assertions} == {f"pagerduty:D{n}" for n in range(1, 6)}
    assert len(facts.aliases) == 6
    # names came with the listing: no service is fetched on its own
    assert not [p for p in api.paths() if p.startswith(("/services/", "/business_services/"))]
    assert sum(p.startswith("/service_dependencies/") for p in api.paths()) == 6


def test_an_account_without_business_services_still_yields_the_technical_graph() -> None:
    with pagerduty_api() as api:
        plan = {"error": {"message": "Account does not have the abilities to perform the action", "code": 2012}}
        api.answer_next("/business_services", 402, plan)
        facts = read(api)

    [problem] = facts.problems
    assert problem.severity == "warning"
    assert "business services not listed" in problem.message
    assert ("PCART01", "depends_on", "PREDIS1") in edges(facts)


def test_the_walk_stops_at_pagerdutys_depth_limit_with_a_warning() -> None:
    with pagerduty_api(chain_account(MAX_DEPTH + 3)) as api:
        facts = read(api, "?services=PS000")

    read_ids = {p.rsplit("/", 1)[1] for p in api.paths() if p.startswith(DEPS)}
    assert read_ids == {f"PS{n:03d}" for n in range(MAX_DEPTH + 1)}
    [problem] = facts.problems
    assert problem.where == f"pagerduty:PS{MAX_DEPTH:03d}"
    assert f"PS{MAX_DEPTH + 1:03d}" in problem.message
    # the relationship that reached past the limit is still an edge
    assert (f"PS{MAX_DEPTH + 1:03d}", "depends_on", f"PS{MAX_DEPTH:03d}") in edges(facts)


def test_a_server_error_is_retried_with_backoff_when_pagerduty_names_no_wait() -> None:
    waits: list[float] = []
    with pagerduty_api() as api:
        api.answer_next(DEPS + "PREDIS1", 503, "<html>busy</html>")
        graph = fetch_pagerduty(api.url + "?services=PREDIS1", token=TOKEN, sleep=waits.append)

    assert waits == [1.0]
    assert len(graph.relationships) == 2


def test_a_refused_service_listing_fails_the_source_since_there_is_nothing_to_walk() -> None:
    with pagerduty_api() as api:
        api.answer_next("/services", 400, {"error": {"message": "Invalid Input Provided", "errors": ["Offset"]}})
        with pytest.raises(PagerDutyError, match=r"/services: HTTP 400: Invalid Input Provided: Offset"):
            read(api)


def test_citations_open_each_services_page_and_never_a_page_that_is_no_web_url() -> None:
    account = load_account()
    pages = {s["id"]: f"https://acme.pagerduty.com/service-directory/{s['id']}" for s in account["services"]}
    for service in account["services"]:
        service["html_url"] = pages[service["id"]]
    account["services"][0]["html_url"] = "javascript:alert(1)"  # PREDIS1's: kept out
    with pagerduty_api(account) as api:
        facts = read(api)
    by_alias = {claim.target: claim.citation.url for claim in facts.aliases}
    assert by_alias["PCART01"] == pages["PCART01"]
    assert by_alias["PREDIS1"] == ""
    # A dependency cites the dependent service's page, where PagerDuty lists what it depends on.
    (uses_redis,) = [a for a in facts.assertions if (a.src, a.dst) == ("PCART01", "PREDIS1")]
    assert uses_redis.citation.url == pages["PCART01"]
    assert uses_redis.citation.locator.startswith("pagerduty:")

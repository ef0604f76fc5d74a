from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.facts import Assertion, Problem, SourceFacts
from sync.sources.catalog import (
    catalog_api_url,
    fetch_catalog_documents,
    parse_catalog,
    parse_catalog_api,
    read_catalog,
)
from sync.sources.catalog_fetch import entity_list
from sync.sources.reading.yaml_documents import _load_with_ryml, load_yaml, load_yaml_files

DATA = Path(__file__).parent.parent.parent / "data" / "catalog"
REFERENCE = DATA / "reference"
ACME = DATA / "acme" / "catalog"


def edges(facts: SourceFacts) -> set[tuple[str, str, str]]:
    return {(a.src, a.rel, a.dst) for a in facts.assertions}


def entity_doc(kind: str, name: str, spec: dict[str, object] | None = None, **metadata: object) -> dict[str, object]:
    return {
        "apiVersion": "backstage.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, **metadata},
        "spec": spec if spec is not None else {},
    }


# A Resource as Backstage accepts it: the fields its schema requires.
DATABASE = {"type": "database", "owner": "team-a"}


def parse(*documents: object) -> SourceFacts:
    return parse_catalog("catalog", [(f"cat.yaml#{i}", doc) for i, doc in enumerate(documents, 1)])


def problems_at(facts: SourceFacts, field: str) -> list[Problem]:
    return [p for p in facts.problems if p.field == field]


# --- reference fixture 4.1: shop/checkout, infra/redis, broken kindless


@pytest.fixture(scope="module")
def reference() -> SourceFacts:
    return read_catalog("catalog", str(REFERENCE))


def test_reference_checkout_depends_on_redis_and_cart_in_lower_case(reference: SourceFacts) -> None:
    assert ("component:shop/checkout", "depends_on", "resource:infra/redis") in edges(reference)
    assert ("component:shop/checkout", "depends_on", "component:shop/cart") in edges(reference)


def test_reference_redis_is_owned_by_jdoe_and_a_dependency_of_checkout(reference: SourceFacts) -> None:
    into_redis = {(a.src, a.rel) for a in reference.assertions if a.dst == "resource:infra/redis"}
    assert into_redis == {("component:shop/checkout", "depends_on")}
    assert ("resource:infra/redis", "owned_by", "user:default/jdoe") in edges(reference)


def test_reference_refs_take_field_default_kind_and_own_namespace(reference: SourceFacts) -> None:
    assert {
        ("component:shop/checkout", "owned_by", "group:shop/team-a"),
        ("component:shop/checkout", "part_of", "system:shop/storefront"),
        ("component:shop/checkout", "provides_api", "api:shop/checkout-api"),
        ("component:shop/checkout", "consumes_api", "api:default/payments-api"),
    } <= edges(reference)
    checkout = next(e for e in reference.entities if e.ref == "component:shop/checkout")
    assert (checkout.owner, checkout.system, checkout.type, checkout.lifecycle) == (
        "group:shop/team-a",
        "system:shop/storefront",
        "service",
        "production",
    )


def test_kindless_depends_on_is_reported_with_file_and_field(reference: SourceFacts) -> None:
    broken = [a for a in reference.assertions if a.src == "component:default/broken" and a.rel == "depends_on"]
    assert [(a.dst, a.kindless) for a in broken] == [("default/redis", True)]
    (problem,) = problems_at(reference, "spec.dependsOn[0]")
    assert problem.where == "reference/catalog-info.yaml#3"
    assert "had missing or empty kind" in problem.message
    assert problem.severity == "warning"


def test_locators_name_the_folder_file_and_document_index(reference: SourceFacts) -> None:
    redis = next(e for e in reference.entities if e.ref == "resource:infra/redis")
    assert redis.citation.locator == redis.citation.origin == "reference/catalog-info.yaml#2"
    assert redis.citation.source == "catalog"
    assert all(a.citation.locator.startswith("reference/catalog-info.yaml#") for a in reference.assertions)


def test_single_file_locator_is_the_path_as_given() -> None:
    path = str(REFERENCE / "catalog-info.yaml")
    facts = read_catalog("catalog", path)
    assert [e.citation.locator for e in facts.entities] == [f"{path}#1", f"{path}#2", f"{path}#3"]


# --- edge cases of 4.1


def test_slash_before_colon_means_the_colon_is_part_of_the_name() -> None:
    facts = parse(
        entity_doc("Component", "a", {"owner": "ops/team:x", "dependsOn": ["ns/name:with:colon"]}, namespace="shop")
    )
    assert ("component:shop/a", "owned_by", "group:ops/team:x") in edges(facts)
    (kindless,) = [a for a in facts.assertions if a.kindless]
    assert (kindless.dst, kindless.rel) == ("ns/name:with:colon", "depends_on")


@pytest.mark.parametrize("bad", [":name", "kind:", "kind:/name", 42, None, ["nested"], ""])
def test_malformed_ref_is_an_error_naming_field_and_index_and_the_rest_is_kept(bad: object) -> None:
    facts = parse(entity_doc("Component", "a", {"dependsOn": ["resource:one", "resource:two", bad, "resource:three"]}))
    assert {a.dst for a in facts.assertions} == {
        "resource:default/one",
        "resource:default/two",
        "resource:default/three",
    }
    (problem,) = problems_at(facts, "spec.dependsOn[2]")
    assert (problem.where, problem.severity) == ("cat.yaml#1", "error")


def test_compound_owner_ref_takes_missing_parts_from_defaults_and_backstage_refusing_it() -> None:
    spec = {"type": "service", "lifecycle": "production"}
    facts = parse(
        entity_doc("Component", "a", {**spec, "owner": {"kind": "Group", "name": "Platform"}}, namespace="ops"),
        entity_doc("Component", "b", {**spec, "owner": {"name": "x", "namespace": "Other"}}),
    )
    assert ("component:ops/a", "owned_by", "group:ops/platform") in edges(facts)
    assert ("component:default/b", "owned_by", "group:other/x") in edges(facts)
    assert [(p.where, p.field) for p in facts.problems] == [("cat.yaml#1", "spec.owner"), ("cat.yaml#2", "spec.owner")]
    assert facts.problems[0].message == (
        "a compound reference (a mapping) where Backstage wants text ('group:ops/platform'): "
        "Backstage refuses this entity; read as group:ops/platform"
    )


def test_group_with_empty_children_is_valid_but_missing_children_is_reported() -> None:
    facts = parse(
        entity_doc("Group", "with-children", {"type": "team", "children": []}),
        entity_doc("Group", "without", {"type": "team"}),
    )
    assert len(facts.entities) == 2
    (problem,) = facts.problems
    assert (problem.where, problem.field, problem.severity) == ("cat.yaml#2", "spec.children", "warning")


@pytest.mark.parametrize("name", ["trailing-", "x" * 64, "-leading", "_under", "bad name", "a/b"])
def test_name_breaking_backstage_rules_is_reported_and_entity_kept(name: str) -> None:
    facts = parse(entity_doc("Resource", name, DATABASE))
    assert [e.ref for e in facts.entities] == [f"resource:default/{name.lower()}"]
    (problem,) = facts.problems
    assert (problem.where, problem.field) == ("cat.yaml#1", "metadata.name")
    assert "Backstage refuses this entity; used anyway" in problem.message


@pytest.mark.parametrize("name", ["x" * 63, "a.b_c-d", "A1", "dev--portal", "double__underscore", "a..b"])
def test_name_following_backstage_rules_is_not_reported(name: str) -> None:
    assert parse(entity_doc("Resource", name, DATABASE)).problems == ()


def test_upper_case_namespace_is_read_lower_cased_with_backstage_refusing_it() -> None:
    facts = parse(entity_doc("Resource", "db", DATABASE, namespace="Payments"))
    assert [e.ref for e in facts.entities] == ["resource:payments/db"]
    (problem,) = facts.problems
    assert (problem.where, problem.field, problem.severity) == ("cat.yaml#1", "metadata.namespace", "warning")
    assert problem.message.endswith("Backstage refuses this entity; read as 'payments'")


@pytest.mark.parametrize("namespace", ["team--a", "default", "a1"])
def test_namespace_following_backstage_rules_is_not_reported(namespace: str) -> None:
    assert parse(entity_doc("Resource", "db", DATABASE, namespace=namespace)).problems == ()


def test_depends_on_target_that_does_not_exist_is_kept_for_the_dangling_report() -> None:
    spec = {"type": "service", "lifecycle": "x", "owner": "a", "dependsOn": ["resource:ghost"]}
    facts = parse(entity_doc("Component", "a", spec))
    assert ("component:default/a", "depends_on", "resource:default/ghost") in edges(facts)
    assert facts.problems == ()


# --- documents that are not entities


def test_bad_documents_are_errors_naming_document_and_field_and_others_are_used() -> None:
    good = entity_doc("Resource", "ok", DATABASE)
    no_kind = {"apiVersion": "backstage.io/v1alpha1", "metadata": {"name": "x"}}
    no_name = {"apiVersion": "backstage.io/v1alpha1", "kind": "Component", "metadata": {"title": "x"}}
    facts = parse(no_kind, ["a", "list"], good, no_name, "just text", {"kind": "Component", "metadata": {"name": "y"}})
    assert [e.ref for e in facts.entities] == ["resource:default/ok"]
    found = {(p.where, p.field, p.severity) for p in facts.problems}
    assert found == {
        ("cat.yaml#1", "kind", "error"),
        ("cat.yaml#2", "", "note"),  # no descriptor claims to be a list or a text
        ("cat.yaml#4", "metadata.name", "error"),
        ("cat.yaml#5", "", "note"),
        ("cat.yaml#6", "apiVersion", "error"),
    }


def test_other_yaml_in_the_catalog_is_skipped_quietly_and_an_unread_kind_with_a_warning() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}
    template = {**entity_doc("Template", "t"), "apiVersion": "backstage.io/v1beta3"}
    facts = parse(deployment, entity_doc("Widget", "w"), entity_doc("Location", "l"), template)
    assert facts.entities == ()
    assert [(p.where, p.field, p.severity) for p in facts.problems] == [
        ("cat.yaml#1", "apiVersion", "note"),  # a Kubernetes manifest: not a descriptor
        ("cat.yaml#2", "kind", "warning"),
    ]


def test_non_text_annotation_is_reported_and_dropped() -> None:
    facts = parse(entity_doc("Resource", "r", DATABASE, annotations={"good": "yes", "count": 3}))
    assert dict(facts.entities[0].annotations) == {"good": "yes"}
    (problem,) = facts.problems
    assert problem.field == "metadata.annotations.count"


def test_duplicate_entity_keeps_the_first_and_names_both_locations() -> None:
    facts = parse(
        entity_doc("Resource", "Redis", {"type": "db", "owner": "a"}),
        entity_doc("Resource", "redis", {"type": "db", "owner": "b"}),
    )
    assert [e.citation.locator for e in facts.entities] == ["cat.yaml#1"]
    assert edges(facts) == {("resource:default/redis", "owned_by", "group:default/a")}
    (problem,) = facts.problems
    assert problem.where == "cat.yaml#2"
    assert "cat.yaml#1" in problem.message


def test_parse_catalog_does_not_mutate_its_input() -> None:
    documents = [entity_doc("Component", "a", {"dependsOn": "resource:x", "owner": {"name": "t"}}, title="A")]
    before = copy.deepcopy(documents)
    parse(*documents)
    assert documents == before


def test_single_ref_where_a_list_is_expected_is_read_with_a_warning() -> None:
    facts = parse(
        entity_doc("Component", "a", {"type": "s", "lifecycle": "p", "owner": "o", "dependsOn": "resource:x"})
    )
    assert edges(facts) >= {("component:default/a", "depends_on", "resource:default/x")}
    (problem,) = facts.problems
    assert problem.field == "spec.dependsOn"
    assert problem.message == "expected a list of references: Backstage refuses this entity; read as a list of one"


def test_relation_field_that_backstage_ignores_on_a_kind_is_reported() -> None:
    spec = {
        "type": "openapi",
        "lifecycle": "p",
        "owner": "o",
        "definition": "openapi: 3.0.0",
        "dependsOn": ["resource:db"],
    }
    facts = parse(entity_doc("API", "api", spec))
    assert edges(facts) == {("api:default/api", "owned_by", "group:default/o")}
    assert [p.field for p in facts.problems] == ["spec.dependsOn"]


# --- relations of every kind


def test_relations_of_every_kind_follow_backstage_defaults() -> None:
    facts = read_catalog("catalog", str(ACME))
    assert {
        ("system:default/payments", "part_of", "domain:default/commerce"),
        ("component:default/payments-service", "part_of", "system:default/payments"),
        ("component:default/payments-service", "depends_on", "resource:default/payments-db"),
        ("component:default/web-frontend", "depends_on", "component:default/checkout"),
        ("group:default/payments-team", "child_of", "group:default/engineering"),
        ("user:default/alice", "member_of", "group:default/payments-team"),
    } <= edges(facts)
    assert "location:default/acme-catalog" not in {e.ref for e in facts.entities}


@pytest.mark.parametrize(
    ("kind", "spec", "expected"),
    [
        ("Domain", {"subdomainOf": "Commerce"}, ("domain:ns/d", "part_of", "domain:ns/commerce")),
        ("Component", {"subcomponentOf": "web"}, ("component:ns/d", "part_of", "component:ns/web")),
        ("Group", {"children": ["sub"]}, ("group:ns/sub", "child_of", "group:ns/d")),
        ("Group", {"members": ["bob"]}, ("user:ns/bob", "member_of", "group:ns/d")),
        ("Resource", {"dependencyOf": ["component:api"]}, ("component:ns/api", "depends_on", "resource:ns/d")),
    ],
)
def test_each_relation_field_makes_its_edge(kind: str, spec: dict[str, object], expected: tuple[str, ...]) -> None:
    assert expected in edges(parse(entity_doc(kind, "d", spec, namespace="ns")))


def test_kindless_dependency_of_becomes_a_kindless_source() -> None:
    facts = parse(entity_doc("Resource", "db", {"type": "database", "owner": "a", "dependencyOf": ["billing"]}))
    (assertion,) = (a for a in facts.assertions if a.rel == "depends_on")
    assert (assertion.src, assertion.dst, assertion.kindless) == ("default/billing", "resource:default/db", True)
    assert [p.field for p in facts.problems] == ["spec.dependencyOf[0]"]


def test_consumer_depends_on_provider_through_the_api_citing_both_documents() -> None:
    facts = read_catalog("catalog", str(ACME))
    derived = [a for a in facts.assertions if a.via]
    assert {(a.src, a.rel, a.dst, a.via) for a in derived} == {
        ("component:default/checkout", "depends_on", "component:default/payments-service", "api:default/payments-api")
    }
    assert sorted(a.citation.locator for a in derived) == ["catalog/checkout.yaml#1", "catalog/payments.yaml#2"]
    assert ("component:default/checkout", "consumes_api", "api:default/payments-api") in edges(facts)
    assert ("component:default/payments-service", "provides_api", "api:default/payments-api") in edges(facts)


def test_component_consuming_its_own_api_gets_no_edge_to_itself() -> None:
    facts = parse(entity_doc("Component", "a", {"providesApis": ["x"], "consumesApis": ["x"]}))
    assert not [a for a in facts.assertions if a.via]


def test_alias_claims_come_from_title_aliases_annotation_and_pagerduty_id() -> None:
    facts = read_catalog("catalog", str(ACME))
    claims = [a.alias for a in facts.aliases if a.target == "component:default/payments-service"]
    assert claims == ["Payments Service", "payments-svc", "pay", "PX7Q2ZK"]


# --- files and folders


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


RESOURCE = (
    "apiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata:\n  name: {name}\nspec:\n  type: db\n  owner: a\n"
)


def test_yaml_syntax_error_in_one_document_of_three_keeps_the_other_two(tmp_path: Path) -> None:
    broken = "apiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata: {name: [unclosed\n"
    text = RESOURCE.format(name="first") + "---\n" + broken + "---\n" + RESOURCE.format(name="third")
    write(tmp_path / "catalog" / "three.yaml", text)
    facts = read_catalog("catalog", str(tmp_path / "catalog"))
    assert [e.citation.locator for e in facts.entities] == ["catalog/three.yaml#1", "catalog/three.yaml#3"]
    (problem,) = facts.problems
    # where the flow sequence opened, and where the parser gave up
    assert problem.where == "catalog/three.yaml:11:18"
    assert "flow sequence opened here is not closed" in problem.message and "found at 11:27" in problem.message
    assert "document 2" in problem.message
    assert problem.severity == "error"


def test_binary_and_non_utf8_files_are_problems_not_tracebacks(tmp_path: Path) -> None:
    write(tmp_path / "cat" / "a.yaml", RESOURCE.format(name="a"))
    write(tmp_path / "cat" / "logo.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(tmp_path / "cat" / "latin1.yml", "name: ok\ndescription: caf\xe9\n".encode("latin-1"))
    facts = read_catalog("catalog", str(tmp_path / "cat"))
    assert [e.ref for e in facts.entities] == ["resource:default/a"]
    assert {(p.where, p.severity) for p in facts.problems} == {
        ("cat/logo.yaml", "error"),
        ("cat/latin1.yml:2", "error"),
    }


def test_hidden_folders_and_other_extensions_are_not_read(tmp_path: Path) -> None:
    write(tmp_path / "cat" / ".github" / "workflows" / "ci.yml", "on: push\njobs: {}\n")
    write(tmp_path / "cat" / "notes.txt", "kind: nothing")
    write(tmp_path / "cat" / "b" / "z.YAML", RESOURCE.format(name="z"))
    write(tmp_path / "cat" / "a.yml", RESOURCE.format(name="a"))
    documents = fetch_catalog_documents(str(tmp_path / "cat"))
    assert [locator for locator, _ in documents.documents] == ["cat/a.yml#1", "cat/b/z.YAML#1"]


def test_missing_path_raises_file_not_found_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere"):
        read_catalog("catalog", str(tmp_path / "nowhere"))


def test_folder_without_catalog_files_is_an_error_problem(tmp_path: Path) -> None:
    facts = read_catalog("catalog", str(tmp_path))
    assert facts.entities == ()
    assert [p.severity for p in facts.problems] == ["error"]


def test_many_megabytes_are_loaded_by_worker_processes_with_the_same_result(tmp_path: Path) -> None:
    shutil.copytree(ACME, tmp_path / "catalog")
    for index in range(30):
        body = "---\n".join(RESOURCE.format(name=f"r{index}-{n}") for n in range(20))
        write(tmp_path / "catalog" / "bulk" / f"f{index:02}.yaml", body)
    write(tmp_path / "catalog" / "bulk" / "broken.yaml", RESOURCE.format(name="ok") + "---\na: [\n")
    files = sorted((p, p.name) for p in (tmp_path / "catalog").rglob("*.yaml"))
    serial = load_yaml_files(files, parallel_min_bytes=1 << 40)
    pooled = load_yaml_files(files, parallel_min_bytes=0)
    assert pooled == serial
    assert sum(len(f.documents) for f in pooled) == 30 * 20 + 8 + 1
    assert [p.where for f in pooled for p in f.problems] == ["broken.yaml:9:5"]


# --- the catalog API over HTTP


class CatalogServer:
    """Answers GETs from `routes`; with `token`, like Backstage, 401 unless the request bears it.

    A 3xx route's body is its Location.
    """

    def __init__(self, routes: dict[str, tuple[int, str]], token: str = "") -> None:
        self.routes = routes
        self.paths: list[str] = []
        self.authorizations: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.paths.append(self.path)
                authorization = self.headers.get("Authorization")
                server.authorizations.append(authorization)
                status, body = server.routes.get(self.path, (404, "not found"))
                if token and authorization != f"Bearer {token}":
                    status, body = 401, '{"error": {"name": "AuthenticationError"}}'
                data = body.encode()
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", body)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)

    def __enter__(self) -> CatalogServer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


API_ENTITIES = [
    {
        **entity_doc(
            "Component",
            "checkout",
            {"type": "service", "lifecycle": "production", "owner": "team-a", "consumesApis": ["payments-api"]},
            annotations={"backstage.io/managed-by-location": "url:https://git.example.com/shop/catalog-info.yaml"},
        ),
        "relations": [{"type": "ownedBy", "targetRef": "group:default/team-a"}],
    },
    entity_doc(
        "Component",
        "payments",
        {"type": "service", "lifecycle": "production", "owner": "team-b", "providesApis": ["payments-api"]},
    ),
    entity_doc("Location", "root", {"type": "url"}),
]


@pytest.fixture
def api() -> Iterator[CatalogServer]:
    routes = {
        "/api/catalog/entities": (200, json.dumps(API_ENTITIES)),
        "/broken": (500, "oops"),
        "/garbage": (200, "<html>login</html>"),
        "/object": (200, '{"error": "nope"}'),
        "/raw/catalog-info.yaml": (200, RESOURCE.format(name="from-url")),
    }
    with CatalogServer(routes) as server:
        yield server


def test_api_url_with_bare_host_reads_the_entities_endpoint(api: CatalogServer) -> None:
    facts = read_catalog("catalog", api.url)
    assert api.paths == ["/api/catalog/entities"]
    assert [e.ref for e in facts.entities] == ["component:default/checkout", "component:default/payments"]
    assert ("component:default/checkout", "depends_on", "component:default/payments") in edges(facts)
    assert facts.problems == ()


def test_api_locator_is_the_entity_ref_after_its_location(api: CatalogServer) -> None:
    facts = read_catalog("catalog", api.url + "/")
    assert [e.citation.locator for e in facts.entities] == [
        "url:https://git.example.com/shop/catalog-info.yaml#component:default/checkout",
        "component:default/payments",
    ]


def test_api_server_error_raises_for_the_caller_to_record(api: CatalogServer) -> None:
    with pytest.raises(httpx.HTTPStatusError, match="500"):
        read_catalog("catalog", api.url + "/broken")


def test_unreachable_api_raises_a_transport_error() -> None:
    with CatalogServer({}) as server:
        url = server.url
    with pytest.raises(httpx.TransportError):
        read_catalog("catalog", url, timeout=2.0)


@pytest.mark.parametrize("path", ["/garbage", "/object"])
def test_api_answer_that_is_not_an_entity_array_is_an_error_problem(api: CatalogServer, path: str) -> None:
    facts = read_catalog("catalog", api.url + path)
    assert facts.entities == ()
    (problem,) = facts.problems
    assert (problem.where, problem.severity) == (api.url + path, "error")


def test_yaml_file_behind_a_url_is_read_as_descriptors(api: CatalogServer) -> None:
    facts = read_catalog("catalog", api.url + "/raw/catalog-info.yaml")
    assert [e.citation.locator for e in facts.entities] == [api.url + "/raw/catalog-info.yaml#1"]


def test_token_is_sent_as_a_bearer_header_to_the_catalog_api() -> None:
    routes = {"/api/catalog/entities": (200, json.dumps(API_ENTITIES))}
    with CatalogServer(routes, token="s3cret-static-token") as server:
        facts = read_catalog("catalog", server.url, token="s3cret-static-token")
    assert server.authorizations == ["Bearer s3cret-static-token"]
    assert [e.ref for e in facts.entities] == ["component:default/checkout", "component:default/payments"]


def test_token_read_from_a_secret_file_loses_its_trailing_newline() -> None:
    routes = {"/api/catalog/entities": (200, json.dumps(API_ENTITIES))}
    with CatalogServer(routes, token="s3cret") as server:
        facts = read_catalog("catalog", server.url, token="s3cret\n")
    assert server.authorizations == ["Bearer s3cret"]
    assert len(facts.entities) == 2


def test_without_a_token_no_authorization_is_sent_and_a_guarded_api_refuses() -> None:
    routes = {"/api/catalog/entities": (200, json.dumps(API_ENTITIES))}
    with CatalogServer(routes, token="s3cret") as server, pytest.raises(httpx.HTTPStatusError, match="401"):
        read_catalog("catalog", server.url)
    assert server.authorizations == [None]


def test_wrong_token_raises_for_the_caller_to_record() -> None:
    routes = {"/api/catalog/entities": (200, json.dumps(API_ENTITIES))}
    with CatalogServer(routes, token="s3cret") as server, pytest.raises(httpx.HTTPStatusError, match="401"):
        read_catalog("catalog", server.url, token="stale")
    assert server.authorizations == ["Bearer stale"]


def test_token_does_not_follow_a_redirect_to_another_host() -> None:
    elsewhere = CatalogServer({"/api/catalog/entities": (200, json.dumps(API_ENTITIES))})
    origin = CatalogServer({"/api/catalog/entities": (302, elsewhere.url + "/api/catalog/entities")})
    with elsewhere, origin:
        facts = read_catalog("catalog", origin.url, token="s3cret")
    assert origin.authorizations == ["Bearer s3cret"]
    assert elsewhere.authorizations == [None]
    assert len(facts.entities) == 2


def test_token_is_ignored_for_files_and_folders() -> None:
    assert read_catalog("catalog", str(ACME), token="s3cret") == read_catalog("catalog", str(ACME))


def test_catalog_module_still_exports_its_readers_after_the_fetch_split() -> None:
    import sync.sources.catalog
    import sync.sources.catalog_fetch

    exported = {"read_catalog", "fetch_catalog_documents", "parse_catalog", "parse_catalog_api", "catalog_api_url"}
    assert exported | {"CatalogDocuments"} <= set(sync.sources.catalog.__all__)
    assert all(callable(getattr(sync.sources.catalog, name)) for name in exported)
    assert sync.sources.catalog.CatalogDocuments is sync.sources.catalog_fetch.CatalogDocuments


def test_fetched_api_body_parses_like_a_read() -> None:
    facts = parse_catalog_api("catalog", "https://backstage.example.com/api/catalog/entities", json.dumps(API_ENTITIES))
    assert len(facts.entities) == 2
    assert catalog_api_url("https://backstage.example.com") == "https://backstage.example.com/api/catalog/entities"
    assert catalog_api_url("https://b.example.com/custom/path") == "https://b.example.com/custom/path"


# --- never raising on bad content

yaml_ish = st.lists(
    st.sampled_from(
        [
            "kind: ",
            "Component",
            "apiVersion: backstage.io/v1",
            "metadata:",
            "  name: ",
            "spec:",
            "  dependsOn:",
            "    - ",
            "[",
            "]",
            "{",
            "}",
            ": ",
            "\n",
            "\n---\n",
            "'",
            '"',
            "&a ",
            "*a",
            "!!binary ",
            "\t",
            "\x00",
            "é",
            "null",
            "~",
            "- ",
            "? ",
            "|",
            ">",
            "%YAML 1.1",
            "...",
            "2024-01-01",
            ":name",
            "kind:/x",
            "#",
        ]
    ),
    max_size=40,
).map("".join)
json_ish = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["Component", "backstage.io/v1alpha1", "resource:x", ":name", "kind:", "a/b:c"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "apiVersion",
                    "kind",
                    "metadata",
                    "name",
                    "namespace",
                    "spec",
                    "owner",
                    "dependsOn",
                    "annotations",
                    "consumesApis",
                    "providesApis",
                    "children",
                    "title",
                    "memberOf",
                ]
            )
            | st.text(max_size=4),
            inner,
            max_size=6,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_ish)
def test_loader_and_parser_never_raise_on_malformed_yaml(text: str) -> None:
    loaded = load_yaml(text.encode(), "fuzz.yaml")
    parsed = parse_catalog("catalog", [(f"fuzz.yaml#{i}", doc) for i, doc in loaded.documents])
    assert all(isinstance(p, Problem) for p in loaded.problems + parsed.problems)
    assert all(p.where.startswith("fuzz.yaml") for p in loaded.problems + parsed.problems)


@settings(max_examples=300, deadline=None)
@given(st.lists(json_ish, max_size=5))
def test_parser_never_raises_on_malformed_entities_and_reports_what_it_drops(documents: list[object]) -> None:
    facts = parse_catalog("catalog", [(f"api#{i}", doc) for i, doc in enumerate(documents)])
    read = {e.citation.locator for e in facts.entities}
    reported = {p.where for p in facts.problems}
    for i, doc in enumerate(documents):
        if isinstance(doc, dict) and str(doc.get("kind", "")).lower() in ("location", "template"):
            continue
        if entity_list(doc) is not None:  # a saved API response: each entity is cited on its own
            continue
        assert f"api#{i}" in read | reported
    assert all(isinstance(a, Assertion) and a.citation.locator.startswith("api#") for a in facts.assertions)


NO_RYML = importlib.util.find_spec("ryml") is None


@pytest.mark.skipif(NO_RYML, reason="rapidyaml is not installed")
def test_rapidyaml_reads_plain_catalog_files() -> None:
    text = (ACME / "payments.yaml").read_text()
    fast = _load_with_ryml(text.encode(), text)
    assert fast == list(yaml.safe_load_all(text))


@pytest.mark.skipif(NO_RYML, reason="rapidyaml is not installed")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(json_ish, min_size=1, max_size=3), st.sampled_from([None, '"', "'", "|", ">"]), st.booleans())
def test_rapidyaml_gives_what_pyyaml_gives_or_steps_aside(
    documents: list[object], style: str | None, flow: bool
) -> None:
    try:
        text = yaml.safe_dump_all(documents, default_style=style, default_flow_style=flow, allow_unicode=True)
    except yaml.YAMLError:
        return
    assert load_yaml(text.encode(), "x.yaml", fast=True) == load_yaml(text.encode(), "x.yaml")


@settings(max_examples=200, deadline=None)
@given(st.lists(json_ish, max_size=5))
def test_api_body_parser_never_raises_on_malformed_entities(entities: list[object]) -> None:
    facts = parse_catalog_api("catalog", "https://b.example.com/api/catalog/entities", json.dumps(entities))
    assert all(isinstance(p, Problem) for p in facts.problems)


def test_spec_that_is_not_a_mapping_is_reported_and_the_entity_kept() -> None:
    facts = parse({**entity_doc("System", "s"), "spec": "shop"})
    assert [e.ref for e in facts.entities] == ["system:default/s"]
    assert [(p.field, p.severity) for p in facts.problems] == [("spec", "warning")]

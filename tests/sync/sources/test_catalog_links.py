"""Where a catalog descriptor opens: its view-url, its source location joined with its file's path
under the catalog root, its Backstage entity page; only http(s) URLs."""

from __future__ import annotations

from pathlib import Path

from sync.sources.catalog_links import catalog_root, descriptor_url, entity_page, relative_path

VIEW, SOURCE = "backstage.io/view-url", "backstage.io/source-location"


def test_view_url_wins_then_the_source_location_joined_with_the_files_path() -> None:
    both = {VIEW: "https://git.example.com/a/blob/main/x.yaml", SOURCE: "url:https://git.example.com/b/tree/main/"}
    assert descriptor_url(both, "teams/x.yaml") == "https://git.example.com/a/blob/main/x.yaml"
    located = {SOURCE: "url:https://git.example.com/b/tree/main"}
    assert descriptor_url(located, "teams/x.yaml") == "https://git.example.com/b/tree/main/teams/x.yaml"
    # A catalog API's answer has no file path to join: only its view-url counts.
    assert descriptor_url(located, None) == ""


def test_a_location_naming_the_descriptors_own_folder_is_not_repeated() -> None:
    # As Backstage writes it, and as real catalogs carry it: the location is the descriptor's folder.
    own = {SOURCE: "url:https://github.com/acme/demo/tree/main/catalog/frontend-app/"}
    assert descriptor_url(own, "catalog/frontend-app/catalog-info.yaml") == (
        "https://github.com/acme/demo/tree/main/catalog/frontend-app/catalog-info.yaml"
    )
    blob = {SOURCE: "url:https://github.com/acme/lab/blob/main/tetris"}
    assert (
        descriptor_url(blob, "tetris/component.yaml") == "https://github.com/acme/lab/blob/main/tetris/component.yaml"
    )
    # Only whole folders count: `ris/` is no folder the location ends with.
    assert (
        descriptor_url(blob, "ris/component.yaml") == "https://github.com/acme/lab/blob/main/tetris/ris/component.yaml"
    )


def test_a_url_that_is_no_web_url_is_never_where_a_descriptor_opens() -> None:
    for hostile in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "url:javascript:x"):
        assert descriptor_url({VIEW: hostile, SOURCE: hostile}, "x.yaml") == "", hostile
    assert descriptor_url({SOURCE: "github:acme/x"}, "x.yaml") == ""  # not the `url:` form
    # A repository's root names no ref: a catalog folder's path joined to it would open nothing.
    assert descriptor_url({SOURCE: "url:https://github.com/acme/antifraud/"}, "payments.yaml") == ""
    gitlab = {SOURCE: "url:https://gitlab.example.com/g/r/-/tree/v2/deploy/"}
    assert descriptor_url(gitlab, "x.yaml") == "https://gitlab.example.com/g/r/-/tree/v2/deploy/x.yaml"


def test_the_path_under_the_catalog_root_as_the_locators_name_it(tmp_path: Path) -> None:
    folder = tmp_path / "catalog"
    folder.mkdir()
    assert catalog_root(str(folder)) == "catalog/"
    assert relative_path("catalog/teams/x.yaml#3", "catalog/") == "teams/x.yaml"
    assert catalog_root("examples/all.yaml") == "examples/"
    assert relative_path("examples/components/a.yaml#1", "examples/") == "components/a.yaml"
    assert relative_path("elsewhere/a.yaml#1", "examples/") == ""
    assert relative_path("catalog/../a.yaml#1", "catalog/") == ""


def test_an_entity_page_follows_backstages_route_with_each_part_encoded() -> None:
    base = "https://backstage.example.com"
    assert entity_page(base, "Default", "Component", "payments") == f"{base}/catalog/default/component/payments"
    assert entity_page(base, "default", "component", "a/b?c") == f"{base}/catalog/default/component/a%2Fb%3Fc"
    assert entity_page("", "default", "component", "payments") == ""

"""`kind: Location` in a local catalog: its targets beside it are read, each file once, inside the
catalog root only; a URL, a path out of the root, a provider's type or a missing file is said, in
the read's problems, naming the Location's document and the target's field. Written from Backstage's
descriptor format (https://backstage.io/docs/features/software-catalog/descriptor-format#kind-location)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graph.facts import SourceFacts
from graph.snapshot import SnapshotRef
from sync.refresh import APPLIED, UNCHANGED, sync_once
from sync.sources.catalog import parse_catalog_api, read_catalog, read_catalog_rows
from sync.sources.catalog_fetch import catalog_version
from sync.sources.registry import SourceSpec
from sync.store.fact_codec import EncodedFacts, encode_rows
from sync.store.fact_store import Store

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def location(name: str, *targets: str, **spec: str) -> str:
    listed = "".join(f"    - {t}\n" for t in targets)
    extra = "".join(f"  {key}: {value}\n" for key, value in spec.items())
    head = f"apiVersion: backstage.io/v1alpha1\nkind: Location\nmetadata:\n  name: {name}\n"
    return f"{head}spec:\n{extra}  targets:\n{listed}"


def component(name: str) -> str:
    return (
        f"apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: {name}\n"
        "spec:\n  type: service\n  lifecycle: production\n  owner: team-a\n"
    )


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def refs(facts: SourceFacts) -> list[str]:
    return sorted(e.ref for e in facts.entities)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Backstage's example layout: all.yaml names the per-kind Locations, which name the files."""
    return write(
        tmp_path / "repo",
        {
            "all.yaml": location("all", "./all-components.yaml", "./all-apis.yaml"),
            "all-components.yaml": location("components", "./components/*.yaml"),
            "all-apis.yaml": location("apis", "./apis/payments-api.yaml"),
            "components/payments.yaml": component("payments"),
            "components/refunds.yaml": component("refunds"),
            # a Location naming the top again: a loop, ended by reading each file once
            "components/back.yaml": location("back", "../all.yaml"),
            "apis/payments-api.yaml": component("payments-api-impl"),
            "unnamed/ledger.yaml": component("ledger"),  # beside the catalog file, but named by no Location
        },
    )


def test_a_catalog_file_reads_what_its_locations_name_and_what_those_name(repo: Path) -> None:
    facts = read_catalog("catalog", str(repo / "all.yaml"))

    assert refs(facts) == [
        "component:default/payments",
        "component:default/payments-api-impl",
        "component:default/refunds",
    ]
    assert facts.problems == ()
    cited = {e.name: e.citation.locator for e in facts.entities}
    assert cited["payments"] == f"{repo}/components/payments.yaml#1"  # named beside the source file


def test_both_read_paths_follow_the_same_locations(repo: Path) -> None:
    location_ = str(repo / "all.yaml")
    whole = read_catalog("catalog", location_)
    rows = read_catalog_rows("catalog", location_, parallel_min_bytes=0)
    assert isinstance(rows, EncodedFacts)
    assert sorted(rows.rows) == sorted(encode_rows(whole))


def test_a_folder_reads_each_file_once_and_what_a_location_names_in_a_hidden_folder(repo: Path) -> None:
    write(repo, {".backstage/extra.yaml": component("extra"), "more.yaml": location("more", "./.backstage/extra.yaml")})

    facts = read_catalog("catalog", str(repo))

    assert refs(facts) == [
        "component:default/extra",
        "component:default/ledger",
        "component:default/payments",
        "component:default/payments-api-impl",
        "component:default/refunds",
    ]
    assert facts.problems == ()  # the Locations' other targets are files the walk read already


@pytest.mark.parametrize(
    ("target", "spec", "said"),
    [
        ("https://github.com/org/repo/blob/main/catalog-info.yaml", {}, "a URL: not fetched"),
        ("../outside.yaml", {}, "outside the catalog root"),
        ("/etc/hostname", {"type": "file"}, "outside the catalog root"),
        ("./missing.yaml", {}, "no such file: nothing read"),
        ("./nothing/*.yaml", {}, "matches no file: nothing read"),
        ("./components", {}, "a folder, not a file: not read"),
    ],
)
def test_what_a_location_does_not_read_is_said_naming_its_document_and_field(
    repo: Path, target: str, spec: dict[str, str], said: str
) -> None:
    write(repo.parent, {"outside.yaml": component("outside")})
    write(
        repo,
        {"extra.yaml": component("extra") + "---\n" + location("odd", "./components/payments.yaml", target, **spec)},
    )

    facts = read_catalog("catalog", str(repo / "extra.yaml"))

    assert refs(facts) == ["component:default/extra", "component:default/payments"]
    [problem] = facts.problems
    assert (problem.where, problem.field, problem.severity) == (f"{repo}/extra.yaml#2", "spec.targets[1]", "warning")
    assert said in problem.message


def test_a_location_of_a_provider_type_is_not_run_and_says_so_for_each_target(repo: Path) -> None:
    targets = ("https://github.com/org/*/blob/main/catalog-info.yaml", "./components/payments.yaml")
    write(repo, {"extra.yaml": location("discovery", *targets, type="github-discovery")})
    facts = read_catalog("catalog", str(repo / "extra.yaml"))
    assert refs(facts) == []
    assert [p.field for p in facts.problems if "Backstage provider oncall-graph does not run" in p.message] == [
        "spec.targets[0]",
        "spec.targets[1]",
    ]


def test_an_optional_target_that_is_not_there_is_skipped_as_backstage_skips_it(repo: Path) -> None:
    write(repo, {"extra.yaml": location("odd", "./missing.yaml", "./components/refunds.yaml", presence="optional")})
    facts = read_catalog("catalog", str(repo / "extra.yaml"))
    assert (refs(facts), facts.problems) == (["component:default/refunds"], ())


def test_a_symlink_a_target_names_out_of_the_root_is_not_read(repo: Path) -> None:
    write(repo.parent, {"secret.yaml": component("secret")})
    (repo / "components" / "linked.yaml").symlink_to(repo.parent / "secret.yaml")
    write(repo, {"extra.yaml": location("odd", "./components/linked.yaml")})

    facts = read_catalog("catalog", str(repo / "extra.yaml"))

    assert refs(facts) == []
    assert any("outside the catalog root" in p.message for p in facts.problems)


def test_a_location_in_yaml_read_from_a_url_is_not_followed_and_says_so() -> None:
    body = location("remote", "./components/payments.yaml") + "---\n" + component("payments")
    facts = parse_catalog_api("catalog", "https://git.example.com/raw/all.yaml", body)
    assert refs(facts) == ["component:default/payments"]
    [problem] = facts.problems
    assert (problem.where, problem.field) == ("https://git.example.com/raw/all.yaml#1", "spec.targets[0]")
    assert "a catalog read from a URL follows no Location" in problem.message


def test_a_location_breaking_backstage_rules_is_said_like_any_entity(repo: Path) -> None:
    write(
        repo,
        {"extra.yaml": location("Bad Name", "./components/refunds.yaml").replace("kind: Location", "kind: location")},
    )
    facts = read_catalog("catalog", str(repo / "extra.yaml"))
    assert refs(facts) == ["component:default/refunds"]
    assert {p.field for p in facts.problems} == {"kind", "metadata.name"}


def test_a_catalog_file_changes_when_a_file_its_locations_name_changes(store: Store, repo: Path) -> None:
    spec, ref = SourceSpec("catalog", str(repo / "all.yaml")), SnapshotRef()
    before = catalog_version(spec.location)
    assert [o.outcome for o in sync_once([spec], store, ref, lambda: T0).outcomes] == [APPLIED]
    assert [o.outcome for o in sync_once([spec], store, ref, lambda: T0 + timedelta(minutes=1)).outcomes] == [UNCHANGED]

    write(repo, {"components/refunds.yaml": component("refunds-v2")})
    assert catalog_version(spec.location) != before
    [outcome] = sync_once([spec], store, ref, lambda: T0 + timedelta(minutes=2)).outcomes

    assert outcome.outcome == APPLIED
    [facts] = store.load_facts()
    assert "component:default/refunds-v2" in refs(facts) and "component:default/refunds" not in refs(facts)

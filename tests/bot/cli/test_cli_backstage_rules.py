"""What a catalog holds that Backstage would refuse, or that oncall-graph does not read, as the command
line says it: run as a user would (a subprocess on a fresh working directory, in-memory database)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.cli.test_cli import run, run_json

MEMORY = ("--db", "sqlite:///:memory:")
TEAM = """\
apiVersion: backstage.io/v1alpha1
kind: Group
metadata: {name: payments-team}
spec: {type: team, children: []}
"""
UNOWNED = """\
---
apiVersion: backstage.io/v1alpha1
kind: Component
metadata: {name: refunds}
spec: {type: service, lifecycle: production}
"""


@pytest.fixture(autouse=True)
def _fresh_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def catalog(folder: Path, **files: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("__", "/")).parent.mkdir(parents=True, exist_ok=True)
        (folder / name.replace("__", "/")).write_text(text)
    return folder


def test_a_component_without_an_owner_is_listed_with_its_file_and_document(tmp_path: Path) -> None:
    folder = catalog(tmp_path / "cat", **{"services.yaml": TEAM + UNOWNED})

    code, data = run_json(*MEMORY, "--catalog", str(folder), "lint")
    done = run(*MEMORY, "--catalog", str(folder), "lint")

    said = "cat/services.yaml#2: spec.owner: component:default/refunds names no owner"
    assert code == 0
    assert [line.split(": ", 1)[1].split(" (", 1)[0] for line in data["without_owner"]] == [said]
    assert "entities without an owner: 1" in done.stdout
    assert f"  warning: {said} (Backstage refuses a component without one)" in done.stdout
    # said once in lint; at sync, where the reader found it, as Backstage's refusal
    assert not [p for p in data["input_problems"] if "spec.owner" in p]
    assert "cat/services.yaml#2: spec.owner: required for a Component; missing: Backstage refuses" in done.stderr


def test_a_catalog_of_no_descriptor_fails_lint_with_exit_2_naming_it(tmp_path: Path) -> None:
    good = catalog(tmp_path / "cat", **{"team.yaml": TEAM})
    docs = catalog(tmp_path / "docs", **{"mkdocs.yml": "site_name: x\n", "values.yaml": "replicaCount: 2\n"})

    code, data = run_json(*MEMORY, "--catalog", str(good), "--catalog", str(docs), "lint")

    assert code == 2
    [failed] = data["failed_sources"]
    assert failed["name"] == f"catalog:{docs}"
    assert f"{docs}: no entity read: no document here is a Backstage descriptor" in failed["error"]


def test_lint_says_what_a_location_did_not_read_and_sync_reads_what_it_names(tmp_path: Path) -> None:
    root = catalog(
        tmp_path / "repo",
        **{
            "all.yaml": (
                "apiVersion: backstage.io/v1alpha1\nkind: Location\nmetadata: {name: all}\n"
                "spec:\n  targets: [./services/*.yaml, 'https://github.com/org/repo/blob/main/catalog-info.yaml']\n"
            ),
            "services__team.yaml": TEAM,
        },
    )

    code, data = run_json(*MEMORY, "--catalog", str(root / "all.yaml"), "lint")

    assert code == 0
    [said] = data["input_problems"]
    assert said.startswith(f"warning: {root}/all.yaml#1: spec.targets[1]: 'https://github.com/")
    assert said.endswith("a URL: not fetched (give it as a --catalog source of its own to read it)")
    done = run(*MEMORY, "--catalog", str(root / "all.yaml"), "resolve", "payments-team")
    assert done.returncode == 0 and "group:default/payments-team" in done.stdout

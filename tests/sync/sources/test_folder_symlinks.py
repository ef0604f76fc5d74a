"""Symlinks in a catalog folder: followed inside it, once; loops and links out refused as problems."""

from __future__ import annotations

from pathlib import Path

import orjson

from sync.sources.catalog import read_catalog_rows
from sync.sources.versions import local_version
from sync.store.fact_codec import EncodedFacts, encode_rows

DESCRIPTOR = (
    "apiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata: {{name: {name}}}\n"
    "spec: {{type: cache, owner: team-a}}\n"
)


def entity_names(location: Path) -> list[str]:
    facts = read_catalog_rows("catalog:x", str(location))
    rows = facts.rows if isinstance(facts, EncodedFacts) else encode_rows(facts)
    return sorted(orjson.loads(payload)["name"] for kind, _, payload in rows if kind == "entity")


def problems(location: Path) -> list[str]:
    return [str(p) for p in read_catalog_rows("catalog:x", str(location)).problems]


def catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "catalog"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "redis.yaml").write_text(DESCRIPTOR.format(name="redis"))
    return folder


def test_a_symlink_loop_is_reported_not_followed(tmp_path: Path) -> None:
    folder = catalog(tmp_path)
    (folder / "sub" / "loop").symlink_to("..")
    assert entity_names(folder) == ["redis"]
    [problem] = problems(folder)
    assert "catalog/sub/loop" in problem and "symlink loop" in problem
    assert local_version(str(folder)).startswith("sha:")  # the version walk ends too


def test_a_symlink_out_of_the_folder_is_not_read(tmp_path: Path) -> None:
    folder = catalog(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.yaml").write_text(DESCRIPTOR.format(name="not-ours"))
    (folder / "linked-dir").symlink_to(outside)
    (folder / "linked.yaml").symlink_to(outside / "secret.yaml")
    assert entity_names(folder) == ["redis"]
    found = problems(folder)
    assert len(found) == 2 and all("outside the source folder" in p for p in found)
    assert any("catalog/linked-dir" in p for p in found) and any("catalog/linked.yaml" in p for p in found)


def test_a_symlink_inside_the_folder_is_followed_once(tmp_path: Path) -> None:
    folder = catalog(tmp_path)
    (folder / "more").mkdir()
    (folder / "more" / "kafka.yaml").write_text(DESCRIPTOR.format(name="kafka"))
    (folder / "alias-of-more").symlink_to("more")
    names = entity_names(folder)
    assert names == ["kafka", "redis"]
    [problem] = problems(folder)
    assert "already read" in problem


def test_a_dangling_symlink_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    folder = catalog(tmp_path)
    (folder / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    assert entity_names(folder) == ["redis"]
    [problem] = problems(folder)
    assert "catalog/gone.yaml" in problem and "leads nowhere" in problem

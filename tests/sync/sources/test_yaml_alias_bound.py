"""A YAML alias bomb in a catalog or aliases file is one file's clear problem, read in bounded memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from sync.sources.aliases import parse_aliases
from sync.sources.catalog import read_catalog
from sync.sources.reading.shown import MAX_CHARS, shown
from sync.sources.reading.yaml_documents import load_yaml

GOOD = """\
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: checkout
spec:
  type: service
  lifecycle: production
  owner: group:payments
"""


def bomb(levels: int = 9, width: int = 9) -> str:
    """The "billion laughs" shape: each anchor a list of `width` aliases of the one before."""
    lines = ["apiVersion: backstage.io/v1alpha1", "kind: Component", "metadata:", "  name: bomb", "x-anchors:"]
    lines.append("  l0: &l0 [" + ", ".join(['"resource:lol"'] * width) + "]")
    for level in range(1, levels):
        lines.append(f"  l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    lines += ["spec:", "  type: service", "  owner: group:payments", f"  dependsOn: *l{levels - 1}"]
    return "\n".join(lines) + "\n"


def test_the_bomb_is_about_one_kilobyte() -> None:
    assert len(bomb()) < 1024


def test_a_catalog_folder_keeps_its_good_file_and_names_the_bomb_file(tmp_path: Path) -> None:
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "a-good.yaml").write_text(GOOD)
    (folder / "bomb.yaml").write_text(bomb())
    tracemalloc.start()
    facts = read_catalog("catalog:x", str(folder))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [e.name for e in facts.entities] == ["checkout"]
    [problem] = [p for p in facts.problems if "bomb.yaml" in p.where]
    assert problem.where.startswith("catalog/bomb.yaml:1")
    assert "alias bomb" in problem.message and problem.severity == "error"
    assert peak < 64 * 1024 * 1024  # 9**9 expanded refs would need gigabytes


def test_a_bomb_document_costs_only_itself() -> None:
    loaded = load_yaml(GOOD + "---\n" + bomb(), "catalog/two.yaml")
    assert [index for index, _ in loaded.documents] == [1]
    [problem] = loaded.problems
    assert problem.where.startswith("catalog/two.yaml:10")  # the second document starts at line 10


def test_ordinary_anchors_and_merge_keys_still_read() -> None:
    text = "defaults: &d {type: service, owner: group:payments}\nspec: {<<: *d, lifecycle: production}\n"
    loaded = load_yaml(text, "c.yaml")
    assert loaded.problems == ()
    assert loaded.documents[0][1] == {
        "defaults": {"type": "service", "owner": "group:payments"},
        "spec": {"type": "service", "owner": "group:payments", "lifecycle": "production"},
    }


def test_many_merges_in_a_big_file_are_not_a_bomb() -> None:
    entity = "- {<<: *d, name: svc-%d}\n"
    text = "- &d {type: service, owner: group:payments, lifecycle: production, tags: [a, b, c]}\n"
    text += "".join(entity % i for i in range(20_000))
    loaded = load_yaml(text, "big.yaml")
    assert loaded.problems == ()
    assert len(loaded.documents[0][1]) == 20_001  # type: ignore[arg-type]


def test_a_recursive_alias_is_refused() -> None:
    loaded = load_yaml("spec:\n  dependsOn: &loop [component:a, *loop]\n", "loop.yaml")
    assert loaded.documents == ()
    [problem] = loaded.problems
    assert problem.where.startswith("loop.yaml:2") and "recursive alias" in problem.message


def test_an_aliases_file_with_a_bomb_is_a_problem_not_a_hang() -> None:
    text = 'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]\n'
    for level in "bcdefghi":
        text += f"{level}: &{level} [" + ", ".join([f"*{chr(ord(level) - 1)}"] * 9) + "]\n"
    text += "redis: *i\n"
    facts = parse_aliases("aliases:x", "aliases.yaml", text)
    assert facts.aliases == ()
    [problem] = facts.problems
    assert problem.where == "aliases.yaml:1" and "alias bomb" in problem.message


def test_quoted_values_are_bounded_and_never_expanded() -> None:
    value: object = ["lol"] * 9
    for _ in range(8):
        value = [value] * 9
    assert len(shown(value)) <= MAX_CHARS
    assert len(shown("x" * 10_000_000)) <= MAX_CHARS
    assert shown("redis") == "'redis'"

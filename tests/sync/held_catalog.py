"""A small Backstage catalog in two files, and the edit that breaks one document of it.

Misspelling the `payments` document's kind drops three of its thirteen facts: held under a 20%
limit (ONCALL_GRAPH_MAX_DROP=0.2), with the skipped document (file, document, field) as the
problem behind it. (A file that is not valid YAML keeps its last good facts instead: test_kept_files.)
"""

from __future__ import annotations

from pathlib import Path

MAX_DROP = 0.2
TEAM = """apiVersion: backstage.io/v1alpha1
kind: Group
metadata: {name: platform}
spec: {type: team, children: []}
"""
CHAIN = [("checkout", "payments"), ("payments", "ledger"), ("ledger", "postgres"), ("postgres", "disk")]


def _component(name: str, dependency: str, *, broken: bool = False) -> str:
    # A kind no catalog has: the document is read, and skipped with a problem naming its field.
    kind = "Componnet" if broken else "Component"
    return (
        f"apiVersion: backstage.io/v1alpha1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n"
        f"  type: service\n  lifecycle: production\n  owner: group:platform\n  dependsOn: [component:{dependency}]\n"
    )


def write_catalog(folder: Path, *, broken: bool = False) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "team.yaml").write_text(TEAM)
    documents = [_component(n, d, broken=broken and n == "payments") for n, d in CHAIN]
    (folder / "services.yaml").write_text("---\n".join(documents))
    return str(folder)

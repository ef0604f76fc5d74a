"""The deploy files as data: the Dockerfile's instructions, the compose file, the Kubernetes manifests."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.cli.parser import build_parser
from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "docker-compose.yml"
KUBERNETES = DEPLOY / "kubernetes"
KUBERNETES_VERSION = "1.31.0"  # the oldest Kubernetes the manifests promise to work on


def setting_names() -> set[str]:
    return {str(field.validation_alias) for field in Settings.model_fields.values()}


def cli_commands() -> set[str]:
    subparsers = next(action for action in build_parser()._actions if action.dest == "command")
    assert isinstance(subparsers.choices, dict)
    return set(subparsers.choices)


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int

    def exec_form(self) -> list[str]:
        """The JSON array of `CMD ["a", "b"]`, `ENTRYPOINT [...]` or a HEALTHCHECK's CMD."""
        found = re.search(r"(?:^|\s)(?:CMD\s+)?(\[.*\])\s*$", self.args)
        assert found, f"Dockerfile line {self.line}: {self.keyword} is not in exec form"
        value = json.loads(found.group(1))
        assert isinstance(value, list)
        return [str(part) for part in value]


def instructions(path: Path = DOCKERFILE) -> list[Instruction]:
    """Instructions with their continuation lines joined; comments dropped."""
    found: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if not pending:
            start = number
        pending.append(line.removesuffix("\\").strip())
        if not line.endswith("\\"):
            keyword, _, args = " ".join(pending).partition(" ")
            found.append(Instruction(keyword.upper(), args.strip(), start))
            pending = []
    return found


def final_stage(path: Path = DOCKERFILE) -> list[Instruction]:
    steps = instructions(path)
    last_from = max(i for i, step in enumerate(steps) if step.keyword == "FROM")
    return steps[last_from:]


def one(steps: list[Instruction], keyword: str) -> Instruction:
    matching = [step for step in steps if step.keyword == keyword]
    assert len(matching) == 1, f"expected one {keyword} in the final stage, found {len(matching)}"
    return matching[0]


def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def unset_interpolation(value: str) -> str:
    """What compose makes of `${NAME:-default}` when NAME is not set."""
    return re.sub(r"\$\{[A-Z0-9_]+:-([^}]*)\}", r"\1", value)


def kubernetes_documents() -> dict[str, dict[str, Any]]:
    """Every manifest but the kustomization, by `kind/name`."""
    documents: dict[str, dict[str, Any]] = {}
    for path in sorted(KUBERNETES.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for document in yaml.safe_load_all(path.read_text()):
            documents[f"{document['kind']}/{document['metadata']['name']}"] = document
    return documents


def pod_spec(document: dict[str, Any]) -> dict[str, Any]:
    spec = document["spec"]["template"]["spec"]
    assert isinstance(spec, dict)
    return spec

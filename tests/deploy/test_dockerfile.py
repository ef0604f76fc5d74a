"""The image, as far as it can be checked without a Docker engine: hadolint, what the final stage
holds, the build context, and the very wheel the builder stage makes, run from outside the tree."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from sync.store.database import HEAD
from tests.deploy.files import DOCKERFILE, ROOT, cli_commands, final_stage, instructions, one

HADOLINT = Path(sys.executable).with_name("hadolint")
BUILD_TOOLS = ("build-essential", "gcc", "g++", "make", "python3-dev", "libpq-dev")


def test_hadolint_finds_nothing() -> None:
    done = subprocess.run([str(HADOLINT), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_image_runs_the_command_line_and_serves_by_default() -> None:
    stage = final_stage()
    assert one(stage, "ENTRYPOINT").exec_form() == ["oncall-graph"]
    command = one(stage, "CMD").exec_form()
    assert command == ["serve"] and command[0] in cli_commands()


def test_the_final_stage_has_graphviz_and_no_build_tools() -> None:
    runs = " ".join(step.args for step in final_stage() if step.keyword == "RUN")
    assert re.search(r"apt-get install [^&]*\bgraphviz\b", runs)
    for tool in BUILD_TOOLS:
        assert not re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", runs), f"{tool} in the final image"
    copies = [step for step in final_stage() if step.keyword == "COPY"]
    assert copies == [], "the final stage installs wheels from the builder; it copies no sources"


def test_the_builder_builds_the_wheels_the_final_stage_installs() -> None:
    steps = instructions()
    froms = [step for step in steps if step.keyword == "FROM"]
    assert len(froms) == 2 and froms[0].args.endswith(" AS builder")
    (base,) = [step.args for step in steps if step.keyword == "ARG" and step.args.startswith("PYTHON_IMAGE=")]
    assert base.startswith("PYTHON_IMAGE=python:3.11-slim")
    assert all(step.args.split()[0] == "${PYTHON_IMAGE}" for step in froms)
    wheels = [step for step in steps[: steps.index(froms[1])] if step.keyword == "RUN" and "pip wheel" in step.args]
    assert len(wheels) == 1 and "--wheel-dir /wheels" in wheels[0].args
    install = [step.args for step in final_stage() if step.keyword == "RUN" and "pip install" in step.args]
    assert len(install) == 1 and "from=builder,source=/wheels" in install[0] and "--no-index" in install[0]


def test_the_image_runs_as_a_numeric_non_root_user() -> None:
    user = one(final_stage(), "USER").args
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) != 0, f"USER {user}: Kubernetes' runAsNonRoot needs a numeric, non-zero uid"


def test_the_build_context_holds_what_the_builder_copies_and_no_secrets() -> None:
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    patterns = [p for p in patterns if p and not p.startswith("#")]

    def included(path: str) -> bool:
        keep = True  # Docker's rule: the last matching pattern wins; `!` re-includes
        for pattern in patterns:
            negated = pattern.startswith("!")
            bare = pattern.removeprefix("!").rstrip("/").removeprefix("**/")
            parts = path.split("/")
            if any(fnmatch.fnmatch("/".join(parts[: i + 1]), bare) for i in range(len(parts))) or fnmatch.fnmatch(
                parts[-1], bare
            ):
                keep = negated
        return keep

    copies = [step.args.split() for step in instructions() if step.keyword == "COPY" and "--from" not in step.args]
    sources = [source for args in copies for source in args[:-1]]  # the last argument is the destination
    assert {"pyproject.toml", "README.md", "graph", "sync", "bot"} <= set(sources)
    for source in sources:
        assert (ROOT / source).exists(), f"COPY {source}: no such file in the repository"
        assert included(source) and included(f"{source}/x.py"), f"COPY {source} is excluded by .dockerignore"
    for secret in (".env", "oncall-graph.db", "bot/oncall-graph.db", ".venv/bin/python", "tests/conftest.py"):
        assert not included(secret), f"{secret} would be sent to the Docker daemon"


def test_the_wheel_carries_the_migrations_and_migrates_from_outside_the_source_tree(tmp_path: Path) -> None:
    # What the builder stage does, minus the network: build our wheel, install it apart, run it.
    tree = tmp_path / "src"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    for package in ("graph", "sync", "bot"):
        shutil.copytree(ROOT / package, tree / package, ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(tmp_path / "dist"), "."],
        cwd=tree, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("oncall_graph-*.whl")
    site = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)], check=True)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "DATABASE_URL": f"sqlite:///{run_dir / 'g.db'}"}
    script = (
        "import sync.store.database, bot.cli.main; print(sync.store.database.__file__); "
        "raise SystemExit(bot.cli.main.main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "migrate", "--json"], cwd=run_dir, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    where, _, report = done.stdout.partition("\n")
    assert where.startswith(str(site)), f"imported {where}, not the installed wheel"
    assert json.loads(report)["revision"] == HEAD

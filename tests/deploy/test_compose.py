"""deploy/docker-compose.yml: valid for the compose spec, wired in the right order, and its bot
settings really sync the mounted example catalog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.deploy.files import (
    COMPOSE,
    ROOT,
    cli_commands,
    compose,
    final_stage,
    one,
    setting_names,
    unset_interpolation,
)

OUR_IMAGE = ("bot", "migrate")


def environment(service: str) -> dict[str, str]:
    env = compose()["services"][service].get("environment", {})
    assert isinstance(env, dict), f"{service}: write environment as a mapping"
    return {name: unset_interpolation(str(value)) for name, value in env.items()}


def test_the_compose_file_is_valid_for_the_compose_spec() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(COMPOSE)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_our_services_set_only_real_settings_and_run_real_commands() -> None:
    services = compose()["services"]
    for name in OUR_IMAGE:
        unknown = set(environment(name)) - setting_names()
        assert not unknown, f"{name} sets {sorted(unknown)}, which bot/settings.py does not read"
        assert services[name]["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (COMPOSE.parent / services[name]["build"]["context"] / "deploy" / "Dockerfile").is_file()
        command = services[name].get("command") or one(final_stage(), "CMD").exec_form()
        assert command[0] in cli_commands()
    assert services["migrate"]["command"] == ["migrate"] and services["bot"]["command"] == ["serve"]


def test_the_bot_starts_after_a_healthy_database_and_a_successful_migration() -> None:
    services = compose()["services"]
    assert services["postgres"]["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services["bot"]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert services["bot"]["depends_on"]["postgres"] == {"condition": "service_healthy"}
    assert services["migrate"]["restart"] == "no", "a migration that exits 0 must not be started again"
    assert environment("migrate")["DATABASE_URL"] == environment("bot")["DATABASE_URL"]
    assert environment("bot")["DATABASE_URL"].split("@")[1].startswith("postgres:5432/")


def test_the_published_port_is_the_port_the_bot_serves() -> None:
    port = environment("bot")["PORT"]
    assert compose()["services"]["bot"]["ports"] == [f"{port}:{port}"]


def host_paths(env: dict[str, str]) -> dict[str, str]:
    """The bot's settings with each container path turned into the host path its bind mount shows there."""
    mounts = [m for m in compose()["services"]["bot"]["volumes"] if m["type"] == "bind"]
    mapped = dict(env)
    for name, value in env.items():
        for mount in mounts:
            if value.startswith(mount["target"] + "/"):
                host = (COMPOSE.parent / mount["source"]).resolve() / value.removeprefix(mount["target"] + "/")
                assert host.exists(), f"{name}={value}: {host} does not exist on the host"
                mapped[name] = str(host)
    return mapped


def cli(cwd: Path, env: dict[str, str], *args: str) -> tuple[int, Any]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_"))}
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", *args, "--json"],
        env={**base, **env, "PYTHONPATH": str(ROOT)}, cwd=cwd, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_the_compose_settings_migrate_then_sync_the_mounted_catalog(database_url: str, tmp_path: Path) -> None:
    # The same environment the containers get, on this test's database instead of the `postgres` service.
    code, migrated = cli(tmp_path, {**environment("migrate"), "DATABASE_URL": database_url}, "migrate")
    assert code == 0 and migrated["changed"] is True
    code, synced = cli(tmp_path, {**host_paths(environment("bot")), "DATABASE_URL": database_url}, "sync")
    assert code == 0
    outcomes = {source["name"].split(":")[0]: source["outcome"] for source in synced["sources"]}
    assert outcomes == dict.fromkeys(["catalog", "deploys", "docs", "triples", "aliases"], "applied")


def test_the_repository_root_is_the_build_context() -> None:
    assert (COMPOSE.parent / compose()["services"]["bot"]["build"]["context"]).resolve() == ROOT

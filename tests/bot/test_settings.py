from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def env_names() -> set[str]:
    return {str(f.validation_alias) for f in Settings.model_fields.values()}


def test_env_example_documents_every_setting_and_nothing_else() -> None:
    documented = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.MULTILINE))
    assert documented == env_names()


def test_settings_come_from_the_environment_with_lists_split(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ONCALL_GRAPH_CATALOG", "a.yaml, b/ ,")
    monkeypatch.setenv("ONCALL_GRAPH_STALE_AFTER", "deploys:x=600")
    settings = Settings()
    assert settings.sources("catalog") == ("a.yaml", "b/")
    assert settings.stale_after_map() == {"deploys:x": 600.0}


def test_a_bad_stale_override_names_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ONCALL_GRAPH_STALE_AFTER", "deploys:x")
    with pytest.raises(ValueError, match="ONCALL_GRAPH_STALE_AFTER"):
        Settings().stale_after_map()


def test_readme_settings_table_matches_the_settings_class() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Settings", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", table, re.MULTILINE)) == env_names()


def test_manifest_commands_match_the_registered_handlers() -> None:
    import yaml

    manifest = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yaml").read_text())
    declared = {c["command"] for c in manifest["features"]["slash_commands"]}
    registered = set(re.findall(r'app\.command\("(/[a-z-]+)"\)', (ROOT / "bot" / "slack" / "commands.py").read_text()))
    assert declared == registered == {"/blast-radius", "/suspects", "/graph-lag"}
    assert {"app_mention", "message.channels"} <= set(manifest["settings"]["event_subscriptions"]["bot_events"])


def test_manifest_asks_for_what_the_new_surfaces_use() -> None:
    import yaml

    from bot.slack.shortcuts import CALLBACK_ID

    manifest = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yaml").read_text())
    features, scopes = manifest["features"], set(manifest["oauth_config"]["scopes"]["bot"])
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert features["assistant_view"]["assistant_description"]
    assert {"assistant_thread_started", "assistant_thread_context_changed", "message.im"} <= events
    assert {"assistant:write", "im:history", "channels:history"} <= scopes
    assert "link_shared" in events and {"links:read", "links:write"} <= scopes and features["unfurl_domains"]
    assert "app_home_opened" in events and features["app_home"]["home_tab_enabled"] is True
    assert [(s["callback_id"], s["type"]) for s in features["shortcuts"]] == [(CALLBACK_ID, "message")]


def test_a_backstage_url_that_is_no_web_address_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ONCALL_GRAPH_BACKSTAGE_URL", "backstage.example.com")
    with pytest.raises(ValueError, match="ONCALL_GRAPH_BACKSTAGE_URL"):
        Settings()
    monkeypatch.setenv("ONCALL_GRAPH_BACKSTAGE_URL", " https://backstage.example.com/ ")
    assert Settings().backstage_url == "https://backstage.example.com"


def test_a_bad_setting_stops_the_command_line_naming_each_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ONCALL_GRAPH_BACKSTAGE_URL", "ftp://backstage.example.com")
    monkeypatch.setenv("ONCALL_GRAPH_LIVE_DEADLINE", "-1")
    assert main(["--db", f"sqlite:///{tmp_path / 'g.db'}", "blast-radius", "redis"]) == 2
    said = capsys.readouterr().err
    assert "ONCALL_GRAPH_BACKSTAGE_URL" in said and "ONCALL_GRAPH_LIVE_DEADLINE" in said
    assert "Traceback" not in said and "errors.pydantic.dev" not in said
    assert not (tmp_path / "g.db").exists()  # stopped before anything was opened

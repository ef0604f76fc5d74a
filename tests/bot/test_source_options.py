"""The source options and settings come from the kinds table: each kind once, in the table's order."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.cli.main import source_access, source_specs
from bot.cli.parser import build_parser, given_sources
from bot.settings import Settings
from sync.sources.kinds import SOURCE_KINDS, source_kind
from sync.sources.kinds_docs import cli_table, env_block
from sync.sources.registry import SourceSpec, read_changed
from tests.fakes.http_source import source_server
from tests.fakes.pagerduty_api import TOKEN, pagerduty_api


def test_every_kind_is_a_repeatable_option_given_back_in_the_tables_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = [arg for kind in reversed(SOURCE_KINDS) for arg in (kind.option, f"{kind.name}-1", kind.option, "b")]
    args = build_parser().parse_args([*argv, "lag"])
    expected = [(kind.name, location) for kind in SOURCE_KINDS for location in (f"{kind.name}-1", "b")]
    assert given_sources(args) == expected
    assert source_specs(args, Settings()) == [SourceSpec(kind, location) for kind, location in expected]


def test_every_kind_is_a_setting_from_the_environment_or_dotenv(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    from_env, from_dotenv = SOURCE_KINDS[::2], SOURCE_KINDS[1::2]
    for kind in from_dotenv:
        monkeypatch.delenv(kind.env, raising=False)
    for kind in from_env:
        monkeypatch.setenv(kind.env, f" {kind.name}/a, {kind.name}/b ,")
    (tmp_path / ".env").write_text("".join(f"{kind.env}={kind.name}.yaml\n" for kind in from_dotenv))
    settings = Settings()
    assert {kind.name: settings.sources(kind.dest) for kind in SOURCE_KINDS} == {
        **{kind.name: (f"{kind.name}/a", f"{kind.name}/b") for kind in from_env},
        **{kind.name: (f"{kind.name}.yaml",) for kind in from_dotenv},
    }
    no_options = build_parser().parse_args(["lag"])
    assert [s.kind for s in source_specs(no_options, settings)][:3] == ["catalog", "catalog", "deploys"]


def test_each_kinds_token_reaches_only_its_own_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ONCALL_GRAPH_CATALOG_TOKEN", "backstage-token\n")  # pasted with its newline
    monkeypatch.setenv("PAGERDUTY_API_TOKEN", TOKEN)
    access = source_access(Settings())
    with source_server() as server, pagerduty_api() as pagerduty:
        server.serve("/api/catalog/entities", "[]")
        feed = server.serve("/deploys.jsonl", "")
        assert read_changed(SourceSpec("catalog", server.url), "", access) is not None  # bare host: the API path
        assert read_changed(SourceSpec("deploys", feed), "", access) is not None
        walked = read_changed(SourceSpec("pagerduty", pagerduty.url), "", access)  # the fake refuses a bad token
        (catalog_headers,) = server.hits("/api/catalog/entities")
        (feed_headers,) = server.hits("/deploys.jsonl")
    assert catalog_headers["Authorization"] == "Bearer backstage-token"
    assert "Authorization" not in feed_headers
    assert walked is not None and walked[1] == ""  # an API walk has no content version


def test_a_new_kind_is_one_entry_in_the_table() -> None:
    runbooks = source_kind("docs")
    wiki = replace(
        runbooks,
        name="wiki",
        env="ONCALL_GRAPH_WIKI",
        help="a wiki export folder",
        reads="wiki pages",
        repeatable=False,
    )
    kinds = (*SOURCE_KINDS, wiki)
    parser = build_parser(kinds)
    assert "--wiki SRC" in parser.format_help() and "a wiki export folder" in parser.format_help()
    args = parser.parse_args(["--wiki", "old/", "--wiki", "pages/", "--docs", "runbooks/", "lag"])
    assert given_sources(args, kinds) == [("docs", "runbooks/"), ("wiki", "pages/")]  # not repeatable: the last wins
    assert "| `--wiki PATH` | wiki pages |" in cli_table(kinds)
    assert env_block(kinds).endswith(
        f"# {runbooks.doc}\nONCALL_GRAPH_WIKI={runbooks.example}\n"
        + "".join(f"# {k.token.doc}\n{k.token.env}=\n" for k in SOURCE_KINDS if k.token)
    )

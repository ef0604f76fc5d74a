"""The source kinds table: every reader it names is bound and callable as the registry calls it."""

from __future__ import annotations

import ast
import inspect
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graph.facts import SourceFacts
from graph.observed import TRACE_SOURCE_KINDS
from sync.sources import kinds as kinds_module
from sync.sources.kinds import SOURCE_KINDS, SourceKind, source_kind
from sync.sources.registry import READERS, TEXT_PARSERS, WALKERS, SourceAccess, SourceSpec, bound, read_changed
from sync.sources.trace_options import TraceOptions

ROOT = Path(__file__).resolve().parents[3]


def test_every_kind_has_one_unique_name_option_and_variable() -> None:
    for attribute in ("name", "dest", "option", "env"):
        values = [getattr(kind, attribute) for kind in SOURCE_KINDS]
        assert len(set(values)) == len(values), attribute
    secrets = [kind.token.env for kind in SOURCE_KINDS if kind.token]
    assert not set(secrets) & {kind.env for kind in SOURCE_KINDS}
    assert len(set(secrets)) == len(secrets)


def test_every_named_reader_is_bound_and_takes_what_the_registry_passes() -> None:
    for kind in SOURCE_KINDS:
        if kind.read:
            inspect.signature(bound(kind.read)).bind("docs:x", "x")
        if kind.parse_fetched:
            inspect.signature(bound(kind.parse_fetched)).bind("docs:x", "x.json", "[]")
        if kind.fetch_url:
            inspect.signature(bound(kind.fetch_url)).bind("https://backstage.example.com")
        if kind.walk:
            inspect.signature(bound(kind.walk)).bind("pagerduty:x", "x", token="t", timeout=1.0)
    assert set(READERS) | set(WALKERS) == {kind.name for kind in SOURCE_KINDS}
    assert not set(READERS) & set(WALKERS)
    assert set(TEXT_PARSERS) == {kind.name for kind in SOURCE_KINDS if kind.parse_fetched}


def test_every_trace_kind_is_one_the_graph_reads_as_traffic_and_takes_the_options_and_clock() -> None:
    traced = [kind for kind in SOURCE_KINDS if kind.traces]
    assert {kind.name for kind in traced} == TRACE_SOURCE_KINDS == {"service-graph", "jaeger", "otlp"}
    for kind in traced:
        reader = bound(kind.walk or kind.read)
        options = {"token": "t", "timeout": 1.0} if kind.walk else {}
        inspect.signature(reader).bind("x:x", "x", traces=TraceOptions(), now=datetime.now(UTC), **options)


def test_a_misspelt_reader_fails_naming_it() -> None:
    with pytest.raises(AttributeError, match="read_catalogue"):
        bound("catalog:read_catalogue")


def test_the_declaration_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(kinds_module.__file__ or "").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imported and all(name.split(".")[0] in sys.stdlib_module_names | {"__future__"} for name in imported)


def test_a_kind_reads_files_or_walks_an_api_never_both_nor_neither() -> None:
    plain = {"env": "ONCALL_GRAPH_X", "help": "", "placeholder": "SRC", "reads": "", "doc": ""}
    with pytest.raises(ValueError, match="'x': give exactly one of read and walk"):
        SourceKind(name="x", **plain)
    with pytest.raises(ValueError, match="'x': give exactly one of read and walk"):
        SourceKind(name="x", read="triples:read_triples", walk="pagerduty:read_pagerduty", **plain)
    with pytest.raises(ValueError, match="a walk fetches for itself"):
        SourceKind(name="x", walk="pagerduty:read_pagerduty", parse_fetched="triples:parse_triples", **plain)


def test_an_unknown_kind_is_named_with_the_known_ones() -> None:
    assert source_kind("untrusted-docs").dest == "untrusted_docs"
    with pytest.raises(KeyError, match="'runbook' .*known: catalog, deploys, docs"):
        source_kind("runbook")


def test_a_url_for_a_kind_that_reads_only_local_files_is_refused_before_any_fetch() -> None:
    # Port 9 (discard) on loopback: a fetch would fail with a connection error, not this message.
    spec = SourceSpec("docs", "http://127.0.0.1:9/runbooks.md")
    with pytest.raises(ValueError, match="a docs source is a local file or folder, not a URL: http://127.0.0.1:9/"):
        read_changed(spec, "", SourceAccess(timeout=1.0))


def test_the_untrusted_reader_holds_every_edge_and_quotes_nothing(tmp_path: Path) -> None:
    doc = tmp_path / "outside.md"
    doc.write_text("# Payments\n\nThe payments service depends on the ledger.\n")
    read = read_changed(SourceSpec("untrusted-docs", str(doc)), "", SourceAccess())
    trusted = read_changed(SourceSpec("docs", str(doc)), "", SourceAccess())
    assert read is not None and trusted is not None
    (facts, version), (trusted_facts, trusted_version) = read, trusted
    assert isinstance(facts, SourceFacts) and isinstance(trusted_facts, SourceFacts)
    assert [(a.src, a.dst, a.held) for a in facts.assertions] == [("payments service", "ledger", True)]
    assert facts.passages == () and trusted_facts.passages != ()
    assert trusted_version == version + "+passages"  # the docs kind's declared revision

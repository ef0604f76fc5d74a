"""Runbook and docs folders are walked with the catalog's symlink rules: followed only inside the
folder and never twice; loops, links out of the folder and dangling links are problems naming them."""

from __future__ import annotations

from pathlib import Path

from sync.sources.runbooks import read_runbooks, read_untrusted_runbooks

REDIS = "The cart service depends on Redis.\n"


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "runbooks"
    (docs / "team").mkdir(parents=True)
    (docs / "redis.md").write_text(REDIS)
    (tmp_path / "private.md").write_text("The vault service depends on Consul.\n")
    (docs / "team" / "loop").symlink_to("..")  # a loop back to the folder itself
    (docs / "leak.md").symlink_to(tmp_path / "private.md")  # out of the folder
    (docs / "gone.md").symlink_to(tmp_path / "missing.md")  # dangling
    (docs / "again.md").symlink_to("redis.md")  # inside, but the same file twice
    (docs / "shared").symlink_to("team")  # a folder link inside: followed once
    (docs / "team" / "payments.md").write_text("Payments depends on Postgres.\n")
    return docs


def test_links_out_loops_and_dangling_links_are_refused_and_named(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    for read in (read_runbooks, read_untrusted_runbooks):
        facts = read("docs:runbooks", str(docs))
        cited = {a.citation.origin for a in facts.assertions}
        assert "runbooks/redis.md" in cited
        assert not any("consul" in a.dst.lower() or "vault" in a.src.lower() for a in facts.assertions)
        assert len([a for a in facts.assertions if "postgres" in a.dst.lower()]) == 1  # read once, not twice
        refused = {p.where: p.message for p in facts.problems if p.severity == "error"}
        assert "outside the source folder" in refused["runbooks/leak.md"]
        assert "leads nowhere" in refused["runbooks/gone.md"]
        assert "not read twice" in refused["runbooks/again.md"]
        assert any(where.endswith("loop") and "symlink loop" in message for where, message in refused.items())


def test_passages_never_quote_a_file_reached_through_a_link_out(tmp_path: Path) -> None:
    facts = read_runbooks("docs:runbooks", str(_docs(tmp_path)))
    assert facts.passages and not any("Consul" in p.text for p in facts.passages)

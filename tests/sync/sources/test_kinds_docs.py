"""`.env.example` and the README's source tables are what `sync/sources/kinds.py` declares."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FILES = (".env.example", "README.md")


def kinds_docs(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "sync.sources.kinds_docs", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_the_env_example_and_the_readme_match_the_declared_kinds() -> None:
    done = kinds_docs("--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_drifted_copy_fails_with_a_diff_and_is_rewritten_from_the_declaration(tmp_path: Path) -> None:
    for name in FILES:
        shutil.copy(ROOT / name, tmp_path / name)
    env = (tmp_path / ".env.example").read_text()
    (tmp_path / ".env.example").write_text(env.replace("ONCALL_GRAPH_TRIPLES=", "ONCALL_GRAPH_TRIPLE="))
    readme = (tmp_path / "README.md").read_text()
    row = "| `ONCALL_GRAPH_ALIASES` |"
    assert row in readme and "| `--aliases FILE` |" in readme
    drifted = readme.replace("| `--aliases FILE` |", "| `--aliases PATH` |").replace(row, row + " old words |", 1)
    (tmp_path / "README.md").write_text(drifted)

    done = kinds_docs("--check", "--root", str(tmp_path))
    assert done.returncode == 1
    assert (
        "-ONCALL_GRAPH_TRIPLE=examples/acme/triples.json\n+ONCALL_GRAPH_TRIPLES=examples/acme/triples.json"
        in done.stdout
    )
    assert "-| `--aliases PATH` |" in done.stdout and "+| `--aliases FILE` |" in done.stdout
    assert "+++ README.md (from kinds.py)" in done.stdout and "2 file(s) drifted" in done.stderr
    assert (tmp_path / "README.md").read_text() == drifted  # --check changes nothing

    assert kinds_docs("--root", str(tmp_path)).returncode == 0
    for name in FILES:
        assert (tmp_path / name).read_text() == (ROOT / name).read_text(), name


def test_a_file_without_its_generated_block_is_named(tmp_path: Path) -> None:
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    (tmp_path / ".env.example").write_text("DATABASE_URL=sqlite:///oncall-graph.db\n")
    done = kinds_docs("--check", "--root", str(tmp_path))
    assert done.returncode == 2
    assert "error: .env.example: expected exactly one '# --- Sources (comma-separated lists) ---'" in done.stderr

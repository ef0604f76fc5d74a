"""The restart benchmark's format table runs against the code as it is: it reaches into the
serving path (the swap's preparation, the image's pickling), which a refactor can move."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.restart_bench import formats

ACME = Path(__file__).resolve().parents[2] / "examples" / "acme"


def test_the_format_table_writes_and_loads_a_served_snapshot_both_ways(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'graph.db'}"
    sync = [sys.executable, "-m", "bot.cli", "--db", db, "--catalog", str(ACME / "catalog"), "sync"]
    subprocess.run(sync, check=True, capture_output=True)
    found = formats(db)
    assert set(found) == {"image (deferred)", "whole, protocol 4"}
    for label, figures in found.items():
        assert set(figures) == {"mb", "write_s", "load_s"} and min(figures.values()) >= 0, label

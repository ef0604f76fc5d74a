"""The walks' scipy, loaded on a thread at a start while the first walk may already want it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: this test process has long imported scipy.
_FIRST_WALK_RACES_THE_LOADER = """
import sys, threading
import bot.main  # the server's composition root, as `serve` starts
from graph.warm import WALK_MODULES, load_walk_modules, warm
from graph.walks.blast import blast_radius
from tests.graph.builders import chain

print("before", any(name in sys.modules for name in WALK_MODULES))
graph = chain("a", "b", "c", "d")
loader = threading.Thread(target=load_walk_modules)
loader.start()
warm(graph)  # builds the walk's matrices: takes scipy whether or not the loader is done
print("impacted", sorted(i.entity for i in blast_radius(graph, "component:default/d").impacted))
loader.join()
print("after", all(name in sys.modules for name in WALK_MODULES))
"""


def test_scipy_is_not_imported_with_the_server_and_a_walk_racing_its_loader_gets_it_whole() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_WALK_RACES_THE_LOADER], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "before False"
    assert lines[1] == "impacted ['component:default/a', 'component:default/b', 'component:default/c']"
    assert lines[2] == "after True"

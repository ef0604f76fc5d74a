"""The `dot` the picture tests (and the bot they start) run: Graphviz's when installed, else graphviz-pure.

graphviz-pure (a dev dependency, a port of Graphviz 16.1 shipped as a wheel) installs its program as
`graphviz-pure`, never as `dot`, so it cannot shadow a system Graphviz. When the PATH has no `dot`,
a private folder holding a `dot` link to it goes at the end of the PATH: the bot finds it the way it
finds Graphviz (`shutil.which("dot")`), in this process and in every subprocess the tests start.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

PURE = "graphviz-pure"


def ensure_dot() -> str | None:
    """The `dot` found on the PATH, after putting graphviz-pure's there when there was none."""
    found = shutil.which("dot")
    if found is not None:
        return found
    pure = shutil.which(PURE, path=sysconfig.get_path("scripts")) or shutil.which(PURE)
    if pure is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="oncall-dot-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "dot").symlink_to(pure)
    os.environ["PATH"] = os.pathsep.join([os.environ.get("PATH", ""), str(folder)])
    return shutil.which("dot")


def describe(dot: str | None) -> str:
    """One line for the test report's header: which `dot` runs, and its version."""
    if dot is None:
        return f"dot: none on the PATH and no {PURE} (apt-get install graphviz, or `make install`)"
    done = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=30, check=False)
    version = (done.stderr or done.stdout).strip().splitlines()
    return f"dot: {dot} ({version[0] if version else 'no version'})"

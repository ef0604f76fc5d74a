"""DOT source to PNG bytes through Graphviz's `dot`, run as a subprocess with a timeout.

Graphviz is optional: without `dot` on the PATH every answer stays text-only, and the renderer
says so once (the first time a picture is asked for), never once per request.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RENDER_TIMEOUT = 10.0  # seconds; a 40-node picture renders in well under one
MISSING = "Graphviz `dot` was not found on the PATH: answers go out without pictures (install graphviz)"


@dataclass(frozen=True, slots=True)
class Rendering:
    png: bytes | None
    problem: str  # empty when drawn, or when the missing-Graphviz warning was already given


class PictureRenderer:
    """One per process (the composition root builds it), so the missing-Graphviz warning is said once."""

    def __init__(self, dot: str | None, *, timeout: float = RENDER_TIMEOUT) -> None:
        self.dot = dot
        self.timeout = timeout
        self._warned = False
        self._lock = threading.Lock()

    @classmethod
    def find(cls, search_path: str | None = None, *, timeout: float = RENDER_TIMEOUT) -> PictureRenderer:
        """`dot` from the PATH (or from `search_path`, an os.pathsep-separated list of folders)."""
        return cls(shutil.which("dot", path=search_path), timeout=timeout)

    @property
    def available(self) -> bool:
        return self.dot is not None

    def missing_warning(self) -> str | None:
        """The missing-Graphviz warning the first time it is asked for, then None."""
        if self.dot is not None:
            return None
        with self._lock:
            first, self._warned = not self._warned, True
        return MISSING if first else None

    def render(self, source: str) -> Rendering:
        """The PNG, or what went wrong: Graphviz missing (said once), failing or too slow."""
        if self.dot is None:
            return Rendering(None, self.missing_warning() or "")
        try:
            done = subprocess.run(
                [self.dot, "-Tpng"], input=source.encode(), capture_output=True, timeout=self.timeout, check=False
            )
        except subprocess.TimeoutExpired:
            return Rendering(None, f"Graphviz took longer than {self.timeout:g} s to draw the picture")
        except OSError as exc:
            return Rendering(None, f"could not run Graphviz {self.dot}: {exc}")
        if done.returncode != 0 or not done.stdout.startswith(PNG_SIGNATURE):
            error = done.stderr.decode(errors="replace").strip()[:500]
            return Rendering(None, f"Graphviz failed to draw the picture (exit status {done.returncode}): {error}")
        return Rendering(done.stdout, "")

    def render_png(self, source: str) -> bytes | None:
        """The PNG, or None with the reason logged (the server's way: answers go out without it)."""
        rendering = self.render(source)
        if rendering.problem:
            log.warning("%s; answering without a picture", rendering.problem)
        return rendering.png

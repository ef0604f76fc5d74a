"""A restart without ANTHROPIC_API_KEY never imports the Anthropic SDK (2 s of a 3.5 s start)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_bot_and_the_command_line_start_without_the_model_sdk() -> None:
    probe = (
        "import sys, bot.main, bot.cli.main; print(sorted(m for m in sys.modules if m.split('.')[0] == 'anthropic'))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"

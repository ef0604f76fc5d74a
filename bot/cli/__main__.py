"""`python -m bot.cli`: the command line, as the console script `oncall-graph` runs it."""

from __future__ import annotations

import sys

from bot.cli.main import main

if __name__ == "__main__":
    sys.exit(main())

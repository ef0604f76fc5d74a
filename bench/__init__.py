"""Speed and memory benchmark: synthetic Backstage catalogs, timed loads, walks and baselines."""

from __future__ import annotations

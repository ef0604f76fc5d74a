"""Source text printed by the real command line: problems, lag, errors, suggestions and answers reach
the terminal with no escape sequence (CSI, OSC 8 hyperlinks), bell or bidi override, text or JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.bot.cli.test_cli import ROOT

# Colour, an OSC 8 hyperlink ended by BEL, a right-to-left override, an 8-bit CSI clearing the screen.
HOSTILE = "\x1b[31mred\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\u202egnp.exe\x9b2J\u2066"
ACTING = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066")


def hostile_sources(folder: Path) -> list[str]:
    q = json.dumps  # a JSON string is a YAML double-quoted scalar, escapes and all
    (folder / "catalog.yaml").write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\n"
        f"metadata: {{name: {q('pay' + HOSTILE)}, title: {q('Pay ' + HOSTILE)}}}\n"
        f"spec: {{type: service, owner: {q('group:team' + HOSTILE)}, dependsOn: [{q('component:ghost' + HOSTILE)}]}}\n"
        "---\napiVersion: backstage.io/v1alpha1\nkind: Component\n"
        f"metadata: {{name: ledger, title: {q('Ledger ' + HOSTILE)}, annotations: {{oncall-graph/aliases: "
        f"{q('books' + HOSTILE)}}}}}\n"
        f"spec: {{type: service, owner: group:team, dependsOn: [{q('resource:db' + HOSTILE)}]}}\n"
    )
    deploy = {"id": "r-1" + HOSTILE, "service": "ledger", "version": "v1" + HOSTILE, "actor": "al" + HOSTILE,
              "deployed_at": "2026-11-29T14:00:00Z", "url": "https://ci.example.com/" + HOSTILE}  # fmt: skip
    (folder / "deploys.jsonl").write_text(json.dumps(deploy) + "\n{not json" + HOSTILE + "\n")
    return ["--catalog", str(folder / "catalog.yaml"), "--deploys", str(folder / "deploys.jsonl"),
            "--db", f"sqlite:///{folder / 'graph.db'}", "--now", "2026-11-29T15:00:00Z"]  # fmt: skip


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_"))}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=folder,
        env={**env, "PYTHONPATH": str(ROOT)}, timeout=120,
    )  # fmt: skip


def test_no_command_prints_a_control_sequence_a_source_carries(tmp_path: Path) -> None:
    given = hostile_sources(tmp_path)
    commands = [
        ("sync",), ("lint",), ("lag",), ("resolve", "books" + HOSTILE), ("resolve", "ledgr"),
        ("suspects", "ledger", "--since", "2d"), ("blast-radius", "db" + HOSTILE), ("path", "ledger", "pay"),
        ("suspects", "ledger", "--since", "2d", "--json"), ("lint", "--json"), ("lag", "--json"),
        ("resolve", "books" + HOSTILE, "--json"),
    ]  # fmt: skip
    said = ""
    for command in commands:
        done = run(tmp_path, *given, *command)
        assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr, (command, done.stderr)
        for stream in (done.stdout, done.stderr):
            assert not [c for c in ACTING if c in stream], (command, stream[:2000])
        if "--json" in command:
            json.loads(done.stdout)  # still one JSON document, the characters written as \\u escapes
        said += done.stdout + done.stderr
    # What was said is still there, only made harmless: the problems, the failing feed, the suggestion.
    assert "not valid JSON" in said and "breaks Backstage's rule" in said and "component:default/ledger" in said
    assert "\\u202e" in said or "\\u202E" in said or "\ufffd" in said

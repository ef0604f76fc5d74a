"""`.env.example`'s sources block and the README's source tables, written from `sync.sources.kinds`.

    python -m sync.sources.kinds_docs           # rewrite them from the declaration
    python -m sync.sources.kinds_docs --check   # exit 1 with a diff when they drifted (the tests run this)

Only the generated parts are touched: the `# --- Sources` block of `.env.example` (up to the next
blank line), the README's `| option | reads |` table, and the source rows at the top of its
`## Settings` table; everything around them is kept as written.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from sync.sources.kinds import SOURCE_KINDS, SourceKind

ENV_HEADER = "# --- Sources (comma-separated lists) ---"
ENV_NOTE = "# (Written from sync/sources/kinds.py: edit there, then run python -m sync.sources.kinds_docs.)"
CLI_HEADER = "| option | reads |\n| --- | --- |\n"
SETTINGS_HEADER = "| variable | meaning |\n| --- | --- |\n"


def _settings(kinds: Sequence[SourceKind]) -> list[tuple[str, str, str]]:
    """(variable, doc, example) of every source setting: the kinds in order, then their secrets."""
    rows = [(kind.env, kind.doc, kind.example) for kind in kinds]
    return rows + [(k.token.env, k.token.doc, "") for k in kinds if k.token]


def env_block(kinds: Sequence[SourceKind] = SOURCE_KINDS) -> str:
    lines = [ENV_HEADER, ENV_NOTE]
    for env, doc, example in _settings(kinds):
        lines += [*(f"# {line}" for line in doc.splitlines()), f"{env}={example}"]
    return "\n".join(lines) + "\n"


def cli_table(kinds: Sequence[SourceKind] = SOURCE_KINDS) -> str:
    return CLI_HEADER + "".join(f"| `{k.option} {k.placeholder}` | {k.reads} |\n" for k in kinds)


def settings_rows(kinds: Sequence[SourceKind] = SOURCE_KINDS) -> str:
    return "".join(f"| `{env}` | {' '.join(doc.splitlines())} |\n" for env, doc, _ in _settings(kinds))


def _section(text: str, start: str, where: str) -> tuple[int, int]:
    """(start, end) of the block opening with `start` and running to the first blank line."""
    begin = text.find(start)
    if begin < 0 or text.find(start, begin + 1) >= 0:
        raise ValueError(f"{where}: expected exactly one {start.splitlines()[0]!r}")
    end = text.find("\n\n", begin)
    return begin, len(text) if end < 0 else end + 1


def regenerate_env_example(text: str, kinds: Sequence[SourceKind] = SOURCE_KINDS) -> str:
    begin, end = _section(text, ENV_HEADER, ".env.example")
    return text[:begin] + env_block(kinds) + text[end:]


def regenerate_readme(text: str, kinds: Sequence[SourceKind] = SOURCE_KINDS) -> str:
    begin, end = _section(text, CLI_HEADER, "README.md")
    text = text[:begin] + cli_table(kinds) + text[end:]
    begin, end = _section(text, SETTINGS_HEADER, "README.md")
    # The source rows go first; a source variable's row found further down is dropped, not doubled.
    declared = {f"| `{env}` |" for env, _, _ in _settings(kinds)}
    rows = text[begin + len(SETTINGS_HEADER) : end].splitlines(True)
    kept = "".join(row for row in rows if not row.startswith(tuple(declared)))
    return text[:begin] + SETTINGS_HEADER + settings_rows(kinds) + kept + text[end:]


DESCRIPTION = "Write .env.example's sources block and the README's source tables from sync/sources/kinds.py."
GENERATED: dict[str, Callable[[str], str]] = {
    ".env.example": regenerate_env_example,
    "README.md": regenerate_readme,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sync.sources.kinds_docs", description=DESCRIPTION)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 with a diff if a file drifted")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository (default: here)")
    args = parser.parse_args(argv)
    drifted = 0
    for name, regenerate in GENERATED.items():
        path = args.root / name
        try:
            current = path.read_text(encoding="utf-8")
            wanted = regenerate(current)
        except (OSError, ValueError) as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        if wanted == current:
            continue
        drifted += 1
        if args.check:
            diff = difflib.unified_diff(
                current.splitlines(True), wanted.splitlines(True), f"{name} (as written)", f"{name} (from kinds.py)"
            )
            sys.stdout.writelines(diff)
        else:
            path.write_text(wanted, encoding="utf-8")
            sys.stdout.write(f"rewrote {name} from sync/sources/kinds.py\n")
    if drifted and args.check:
        sys.stderr.write(
            f"{drifted} file(s) drifted from sync/sources/kinds.py: run python -m sync.sources.kinds_docs\n"
        )
    return 1 if drifted and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())

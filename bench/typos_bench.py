"""Typo benchmark: recall@5 of name suggestions on one- and two-edit typos of every name of a
generated catalog, and the cost of a miss (a name that resolves to nothing, so suggestions are ranked).

    python -m bench.typos_bench            named-100k, every name
    python -m bench.typos_bench --quick    named-10k
    python -m bench.typos_bench --sample 5000

A typo is made of the name's letters: a substitution, an insertion, a deletion or a transposition of
two neighbouring letters, one or two of them. A typo that resolves by itself (to its own entity, or
is another entity's name) is no miss and is counted apart.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bench.generate import NAMED, OUT, ensure_catalog
from bench.measure import summary_ms

TOP = 5
EDITS = (1, 2)
SEED = 20261201


def typo(name: str, edits: int, rng: random.Random) -> str:
    letters = list(name)
    for _ in range(edits):
        spots = [i for i, ch in enumerate(letters) if ch.isalnum()]
        at = rng.choice(spots)
        op = rng.choice(("substitute", "insert", "delete", "transpose"))
        if op == "substitute":
            letters[at] = rng.choice([c for c in string.ascii_lowercase if c != letters[at]])
        elif op == "insert":
            letters.insert(at, rng.choice(string.ascii_lowercase))
        elif op == "delete" and len(spots) > 3:
            del letters[at]
        elif at + 1 < len(letters) and letters[at + 1].isalnum() and letters[at + 1] != letters[at]:
            letters[at], letters[at + 1] = letters[at + 1], letters[at]
        else:
            letters[at] = rng.choice([c for c in string.ascii_lowercase if c != letters[at]])
    return "".join(letters)


def measure(scenario: str, sample: int | None) -> dict[str, Any]:
    from graph.build import build_snapshot
    from graph.naming.names import match
    from sync.sources.catalog import read_catalog

    catalog = ensure_catalog(NAMED[scenario])
    facts = read_catalog(f"catalog:{catalog.folder}", str(catalog.folder))
    snapshot = build_snapshot([facts], built_at=datetime(2026, 11, 29, tzinfo=UTC))
    index = snapshot.aliases
    began = time.perf_counter()
    index.suggest("warm up the suggestion index")
    first = time.perf_counter() - began
    rng = random.Random(SEED)
    refs = sorted(snapshot.entities)
    if sample:
        refs = rng.sample(refs, min(sample, len(refs)))
    figures: dict[str, Any] = {"scenario": scenario, "names": len(refs), "first_suggestion_s": round(first, 2)}
    for edits in EDITS:
        found = missed = resolved = 0
        costs: list[float] = []
        for ref in refs:
            typed = typo(ref.rsplit("/", 1)[-1], edits, rng)
            if match(index, typed).entity is not None or match(index, typed).candidates:
                resolved += 1
                continue
            began = time.perf_counter()
            suggestions = index.suggest(typed, limit=TOP)
            costs.append(time.perf_counter() - began)
            if ref in suggestions:
                found += 1
            else:
                missed += 1
        figures[f"{edits}_edit"] = {
            "recall_at_5": found / max(1, found + missed),
            "typos": found + missed,
            "resolved_by_themselves": resolved,
            "miss_cost_ms": summary_ms(costs) | {"max": round(1000 * max(costs, default=0.0), 2)},
        }
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="named-10k instead of named-100k")
    parser.add_argument("--sample", type=int, help="this many names (seeded) instead of every name")
    args = parser.parse_args(argv)
    scenario = "named-10k" if args.quick else "named-100k"
    figures = measure(scenario, args.sample)
    for edits in EDITS:
        f = figures[f"{edits}_edit"]
        cost = f["miss_cost_ms"]
        print(
            f"{scenario} {edits}-edit typos of {f['typos']} names: recall@5 {f['recall_at_5']:.2%}, "
            f"miss p50 {cost['p50']:.1f} ms p99 {cost['p99']:.1f} ms max {cost['max']:.1f} ms"
            f" ({f['resolved_by_themselves']} resolved as typed)"
        )
    OUT.mkdir(exist_ok=True)
    (OUT / "typos_results.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

"""What runbook passages add to a build and to an answer, on a synthetic catalog.

    .venv/bin/python -m bench.passages_bench                          # 10k entities, 2k passages
    .venv/bin/python -m bench.passages_bench --entities 100000 --passages 5000
    .venv/bin/python -m bench.passages_bench --scenario layered-100k  # the `make bench` catalog

Entities are named from two words ("amber-falcon"), or taken from a generated bench catalog; each
passage is about 600 characters of filler prose naming four entities in the spellings runbooks
use ("the Amber Falcon service", "amber_falcon", "AmberFalcon", "svc-42"), with a fenced command.
Measured, fastest of `--repeat` runs: the build with and without the passages, linking them
(`graph.exposure.passages.passage_index`, built on first use) and choosing the passages of one answer.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TypeVar

from graph.build import build_snapshot, collect_passages
from graph.exposure.passages import cite_passages, passage_index
from graph.facts import Citation, Entity, Passage, SourceFacts
from graph.snapshot import Snapshot
from sync.collector import collector_paused

T = TypeVar("T")

_WORDS = (
    "amber azure birch cedar cobalt coral crimson dawn delta ember falcon fern frost garnet granite harbor hazel "
    "indigo iris jade juniper kestrel lark lilac lotus maple marble meadow merlin mist nova oak onyx opal orchid "
    "osprey pearl pine plume quartz raven reed ridge river robin ruby rune sable sage sequoia shadow sierra "
    "silver slate sparrow spruce stone storm summit swift thistle thorn tide timber topaz tulip umber valley "
    "velvet violet willow wren zephyr acorn anchor arrow aspen beacon bramble breeze brook canyon cinder cliff "
    "clover comet crane crest dune echo elm fable fawn flint forge fox glade glen grove gull hawk heron hollow"
)
_FILLER = (
    "when the queue backs up check the dashboard first and compare latency per hop before paging anyone "
    "restart only after the replicas have caught up and never flush keys by hand during business hours"
)
WORDS, FILLER = _WORDS.split(), _FILLER.split()
NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


def synthetic_entities(count: int) -> list[Entity]:
    names = [f"{a}-{b}" for a in WORDS for b in WORDS if a != b][:count]
    if len(names) < count:
        names += [f"{a}-{b}-{c}" for a in WORDS for b in WORDS for c in WORDS[:10] if a != b][: count - len(names)]
    return [Entity(f"component:default/{n}", "component", n, Citation("catalog", f"catalog/{n}.yaml#1")) for n in names]


def spell(name: str, rng: random.Random) -> str:
    words = name.split("-")
    return rng.choice(
        (
            f"the {' '.join(w.title() for w in words)} service",
            "_".join(words),
            "".join(w.title() for w in words),
            name,
        )
    )


def passages(entities: Sequence[Entity], count: int, rng: random.Random) -> list[Passage]:
    out = []
    for i in range(count):
        named = [spell(e.name, rng) for e in rng.sample(list(entities), 4)]
        words = [rng.choice(FILLER) for _ in range(90)]
        for position, name in zip(sorted(rng.sample(range(90), 4)), named, strict=True):
            words[position] = name
        text = " ".join(words) + ".\n```sh\n# restart " + named[0] + "\nkubectl rollout restart\n```"
        doc = f"runbooks/doc-{i // 10}.md"
        heading = f"Section {i % 10}"
        out.append(Passage("docs", f"{doc} §{heading}", heading, text, 1 + (i % 10) * 20, doc, ("Runbook", heading)))
    return out


def _built(batches: list[SourceFacts]) -> Snapshot:
    with collector_paused():  # as a sync builds
        return build_snapshot(batches, built_at=NOW)


def _linked(snapshot: Snapshot) -> Snapshot:
    passage_index(snapshot)  # what the first answer would have built
    return snapshot


def fastest(repeat: int, work: Callable[[], T]) -> tuple[float, T]:
    timings, values = [], []
    for _ in range(max(repeat, 1)):
        started = time.perf_counter()
        values.append(work())
        timings.append(time.perf_counter() - started)
    return min(timings), values[-1]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--passages", type=int, default=2_000)
    parser.add_argument("--scenario", help="read a bench catalog (bench/generate.py) instead of naming entities")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rng = random.Random(20261130)
    if args.scenario:
        from bench.generate import SCENARIOS, ensure_catalog
        from sync.sources.catalog import read_catalog

        catalog = ensure_catalog(SCENARIOS[args.scenario])
        base = read_catalog("catalog", str(catalog.folder))
        entities = [e for e in base.entities if e.kind in ("component", "resource")]
    else:
        entities = synthetic_entities(args.entities)
        base = SourceFacts("catalog", tuple(entities))
    docs = SourceFacts("docs", passages=tuple(passages(entities, args.passages, rng)))
    without = fastest(args.repeat, lambda: _built([base]) and None)[0]
    with_passages, snapshot = fastest(args.repeat, lambda: _built([base, docs]))
    # What the build itself adds: gathering the passages (linking waits for the first answer).
    gathering = fastest(args.repeat, lambda: collect_passages([base, docs]))[0]
    # Each run links a copy with no derived indexes yet; the last one's stays for the answers.
    linking, snapshot = fastest(args.repeat, lambda: _linked(replace(snapshot)))
    linked = passage_index(snapshot).linked
    asked = [p.passage for p in linked[:50]]
    subjects = [next(iter(sorted(lp.entities))) for lp in linked[:50]]
    refs = [e.ref for e in entities]
    questions = [[subject, *rng.sample(refs, 5)] for subject in subjects]
    started = time.perf_counter()
    for question in questions:
        cite_passages(snapshot, question)
    per_answer = (time.perf_counter() - started) / len(subjects)
    links = sum(len(lp.entities) for lp in linked)
    result = {
        "entities": len(base.entities),
        "passages": len(docs.passages),
        "build_s": round(without, 3),
        "build_with_passages_s": round(with_passages, 3),
        "gather_passages_ms": round(gathering * 1000, 3),
        "link_s": round(linking, 3),
        "linked_passages": len(linked),
        "links": links,
        "answer_ms": round(per_answer * 1000, 3),
        "asked": len(asked),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

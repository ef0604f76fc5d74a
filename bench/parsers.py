"""YAML parsers side by side on one catalog: time to Python documents, and agreement with PyYAML.

PyYAML's pure-Python loader is about ten times slower than its C loader, so it runs on a sample
of the files and is scaled up by bytes (marked as an estimate).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from sync.sources.reading.yaml_documents import load_yaml, load_yaml_files

SAMPLE_EVERY = 10  # files compared with PyYAML's result
PURE_EVERY = 50  # files parsed by the pure-Python loader (2%)

Parse = Callable[[bytes], list[Any] | None]


def _pyyaml_c(data: bytes) -> list[Any]:
    return list(yaml.load_all(data.decode(), Loader=yaml.CSafeLoader))


def _pyyaml_pure(data: bytes) -> list[Any]:
    return list(yaml.load_all(data.decode(), Loader=yaml.SafeLoader))


def _ryml_tree(data: bytes) -> None:
    import ryml

    ryml.parse_in_arena(data)
    return None


def _ryml_python(data: bytes) -> list[Any]:
    import ryml

    tree = ryml.parse_in_arena(data)
    return [json.loads(str(ryml.emit_json(tree, node))) for node in ryml.children(tree, tree.root_id())]


def _yaml_rs(data: bytes) -> list[Any]:
    import yaml_rs

    found = yaml_rs.loads(data.decode())
    return found if isinstance(found, list) else [found]


def _ours_single(data: bytes) -> list[Any]:
    return [document for _, document in load_yaml(data, "bench", fast=True).documents]


PARSERS: tuple[tuple[str, Parse, int], ...] = (
    ("PyYAML C loader (CSafeLoader)", _pyyaml_c, 1),
    ("PyYAML pure Python (SafeLoader), estimate", _pyyaml_pure, PURE_EVERY),
    ("rapidyaml: tree only, no Python objects", _ryml_tree, 1),
    ("rapidyaml -> JSON -> Python", _ryml_python, 1),
    ("yaml-rs (Rust) loads", _yaml_rs, 1),
    ("ours, one core (ryml with PyYAML fallback)", _ours_single, 1),
)


def compare_parsers(paths: list[Path]) -> list[dict[str, object]]:
    """Seconds (scaled to all files for sampled parsers), MB/s, and agreement with PyYAML."""
    datas = [path.read_bytes() for path in paths]
    total = sum(map(len, datas))
    reference = {i: _pyyaml_c(datas[i]) for i in range(0, len(datas), SAMPLE_EVERY)}
    rows = [_measure(label, parse, every, datas, total, reference) for label, parse, every in PARSERS]
    began = time.perf_counter()
    loaded = load_yaml_files([(path, path.name) for path in paths])
    seconds = time.perf_counter() - began
    same = all([d for _, d in loaded[i].documents] == docs for i, docs in reference.items())
    rows.append(_row("ours, parallel loader (2 worker processes)", seconds, total, same, estimate=False))
    return rows


def _measure(
    label: str, parse: Parse, every: int, datas: list[bytes], total: int, reference: dict[int, list[Any]]
) -> dict[str, object]:
    chosen = range(0, len(datas), every)
    seconds, same = 0.0, True
    for i in chosen:
        began = time.perf_counter()
        try:
            documents = parse(datas[i])
        except Exception:  # noqa: BLE001 - a parser that fails on the catalog is reported, not fatal
            documents, same = None, False
        seconds += time.perf_counter() - began
        if documents is not None and i in reference:
            same = same and documents == reference[i]
    parsed = sum(len(datas[i]) for i in chosen)
    seconds *= total / parsed
    checked = "n/a (no documents)" if parse is _ryml_tree else same
    return _row(label, seconds, total, checked, estimate=every > 1)


def _row(label: str, seconds: float, total: int, same: object, *, estimate: bool) -> dict[str, object]:
    return {"parser": label, "seconds": seconds, "mb_per_s": total / 1e6 / seconds, "same": same, "estimate": estimate}

"""Restart benchmark: `oncall-graph serve` on a synced database, to its first answer, without and with
a valid snapshot image, then with an image BEHIND pushed deploys behind the database (a replica that
was down through a deploy storm: its image brought up by the delta), and its peak RSS; then the image
formats compared on the real snapshot.

    python -m bench.restart_bench            layered-10k and layered-100k
    python -m bench.restart_bench --quick    layered-10k only

`first answer` is from starting the process to a /blast-radius answer at the hub posted to a fake
Slack (start, load, warm, answer); peak RSS is the serving process's VmHWM just before it stops.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.generate import OUT
from bench.measure import status_mb
from bench.sync_bench import scenario_names, synced_sqlite
from tests.e2e.conftest import SECRET, start_bot, stop
from tests.fakes.slack_api import FakeSlack, slack_api

WROTE = "wrote the image of graph version"
LOADED = ("from its image", "and a delta in")  # what the log says when a start used the image
# Pushed deploys stored, each its own version step, between the warm start and the one behind: the
# worst case of a replica down for 4 minutes of 100 deploys a second grouped 5 to a step.
BEHIND = 5000


def restart(db: str, hub: str, images: Path, log: Path, fake: FakeSlack, name: str) -> dict[str, Any]:
    """Seconds from start to /healthz ready and to the first answer; peak RSS; what the log said."""
    began = time.perf_counter()
    bot = start_bot(log, PORT="0", SLACK_BOT_TOKEN="xoxb-bench", SLACK_SIGNING_SECRET=SECRET,
                    SLACK_API_URL=fake.url, DATABASE_URL=db, ONCALL_GRAPH_SYNC_INTERVAL="3600",
                    ONCALL_GRAPH_SNAPSHOT_DIR=str(images))  # fmt: skip
    ready = time.perf_counter() - began
    try:
        bot.command("/blast-radius", hub, fake.response_url(name))
        fake.wait_for(lambda: fake.responses(name), timeout=120)
        first = time.perf_counter() - began
        deadline = time.monotonic() + 300
        while WROTE not in bot.output() and not _used(bot.output()) and time.monotonic() < deadline:
            time.sleep(0.2)  # the image written in the background before the next restart
        rss = status_mb("VmHWM", bot.proc.pid)
        used, delta = _used(bot.output()), LOADED[1] in bot.output()
    finally:
        stop(bot)
    return {"ready_seconds": round(ready, 3), "first_answer_seconds": round(first, 3), "rss_mb": round(rss, 1),
            "image_used": used, "delta_applied": delta}  # fmt: skip


def _used(log: str) -> bool:
    return any(said in log for said in LOADED)


def push_behind(db: str, count: int) -> float:
    """Store `count` native deploy events, one delivery and one version step each, as the leader would
    while this replica is down; the seconds it took."""
    from bot.wiring import clock
    from sync.store.database import make_engine
    from sync.store.fact_store import Store
    from tests.sync.pushes import push_steps

    store = Store(make_engine(db))
    run = uuid.uuid4().hex[:6]  # ids of their own: a second call on one database stores anew
    began = time.perf_counter()
    push_steps(store, clock, ({"id": f"behind-{run}-{i}", "service": f"svc-{i % 5000 + 1}",
                               "deployed_at": clock().isoformat()} for i in range(count)))  # fmt: skip
    store.engine.dispose()
    return time.perf_counter() - began


def formats(db: str) -> dict[str, Any]:
    """Write and load times and sizes of the warmed snapshot as the image pickles it (entities and
    edges deferred, `sync.store.image_maps`) and with every object pickled whole, protocol 4 (the
    derived indexes included). A load of the image defers the entities' and edges' objects to their
    first read."""
    from bot.wiring import clock, open_store, snapshot_ref
    from sync.refresh import load_snapshot
    from sync.store.snapshot_image import dumps, loads

    snapshot = load_snapshot(open_store(db), clock)
    assert snapshot is not None
    snapshot_ref().swap(snapshot)  # warmed and frozen, as serve swaps it in
    found: dict[str, Any] = {}
    for label, write in (("image (deferred)", dumps), ("whole, protocol 4", _protocol_4)):
        began = time.perf_counter()
        data = write(snapshot)
        wrote = time.perf_counter() - began
        began = time.perf_counter()
        loads(data)  # as a start reads an image: the collector paused
        found[label] = {"mb": round(len(data) / 1e6, 1), "write_s": round(wrote, 3),
                        "load_s": round(time.perf_counter() - began, 3)}  # fmt: skip
    return found


def _protocol_4(snapshot: Any) -> bytes:
    import io

    from sync.store.image_pickling import ImagePickler

    buffer = io.BytesIO()
    ImagePickler(buffer, protocol=4).dump(snapshot)
    return buffer.getvalue()


def main(argv: Sequence[str] | None = None) -> None:
    names = scenario_names(argv, __doc__ or "")
    results: dict[str, Any] = {}
    with slack_api() as fake:
        for name, catalog, db, scratch in synced_sqlite(names):
            images = scratch / f"images-{name}"
            cold = restart(db, catalog.hub, images, scratch / f"{name}-cold.log", fake, f"{name}-cold")
            warm = restart(db, catalog.hub, images, scratch / f"{name}-warm.log", fake, f"{name}-warm")
            pushed = push_behind(db, BEHIND)
            print(f"{name:>13} sqlite {BEHIND} pushed deploys stored, a version step each, in {pushed:.1f} s")
            behind = restart(db, catalog.hub, images, scratch / f"{name}-behind.log", fake, f"{name}-behind")
            results[name] = {"without_image": cold, "with_image": warm, f"image_{BEHIND}_steps_behind": behind,
                             "formats": formats(db)}  # fmt: skip
            for label in ("without_image", "with_image", f"image_{BEHIND}_steps_behind"):
                r = results[name][label]
                print(f"{name:>13} sqlite {label:>25}: ready {r['ready_seconds']:6.2f} s  first answer "
                      f"{r['first_answer_seconds']:6.2f} s  peak RSS {r['rss_mb']:6.0f} MB  "
                      f"image used {r['image_used']}{' with a delta' if r['delta_applied'] else ''}")  # fmt: skip
            for label, f in results[name]["formats"].items():
                print(
                    f"{name:>13} {label:>24}: {f['mb']:7.1f} MB  write {f['write_s']:.2f} s  load {f['load_s']:.2f} s"
                )
    OUT.mkdir(exist_ok=True)
    (OUT / "restart_results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

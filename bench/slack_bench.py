"""Slack benchmark: `/blast-radius` end to end (signed request in, message out at a fake Slack API),
sequentially and 50 at once, against `oncall-graph serve` on a synced catalog, two ways:

- **repeated**: one hub asked 30 times (and the hub and a leaf 50 at once): an incident's many
  askers of one failure, answered from the snapshot's kept walks (`graph.walks.blast.recent_walks`)
  after the first;
- **first ask**: distinct failures of the same kind, each asked once, so every answer walks afresh:
  the three shared hubs, then the platform layer's services with the most direct dependents (the
  largest blast radii the layered catalogs have after the hubs).

    python -m bench.slack_bench            layered-10k and layered-100k
    python -m bench.slack_bench --quick    layered-10k only
    python -m bench.slack_bench --scenario layered-100k    one of them (A/B runs)

The bot exports its traces to a fake OTLP collector (the operator's OTEL_EXPORTER_OTLP_ENDPOINT), and
each answer's stage spans are tabulated (`bench/slack_stages.py`): `bench/out/slack_stages.md`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.generate import OUT, Scenario, layout
from bench.measure import summary_ms
from bench.slack_stages import Window, markdown, settled, stage_table
from bench.sync_bench import scenario_names, synced_sqlite
from tests.e2e.conftest import SECRET, Bot, start_bot, stop
from tests.fakes.otlp_receiver import OtlpReceiver, otlp_receiver
from tests.fakes.slack_api import FakeSlack, slack_api

SEQUENTIAL = 30
CONCURRENT = 50


def one_command(bot: Bot, fake: FakeSlack, name: str, target: str) -> tuple[float, float]:
    """(seconds until the HTTP ack, seconds until the answer reached Slack)."""
    began = time.perf_counter()
    response = bot.command("/blast-radius", target, fake.response_url(name))
    acked = time.perf_counter() - began
    if response.status_code != 200:
        raise RuntimeError(f"/blast-radius {target}: HTTP {response.status_code}")
    fake.wait_for(lambda: fake.responses(name), timeout=60)
    return acked, time.perf_counter() - began


def full_texts(fake: FakeSlack) -> int:
    return sum(1 for u in fake.uploads() if str(u["filename"]).endswith(".txt"))


def uploads_done(fake: FakeSlack, *, still: float = 2.0, timeout: float = 120) -> None:
    """Wait until no full text has gone up for `still` seconds: the last phase's background work
    would otherwise run beside the next phase's answers."""
    deadline = time.monotonic() + timeout
    seen, since = full_texts(fake), time.monotonic()
    while time.monotonic() - since < still and time.monotonic() < deadline:
        time.sleep(0.2)
        if (now := full_texts(fake)) != seen:
            seen, since = now, time.monotonic()


def first_asks(scenario: Scenario, count: int) -> list[str]:
    """`count` distinct failures of comparable reach, none asked before: the three hubs, then the
    platform layer's services by their direct dependents, most first."""
    shape = layout(scenario)
    dependents: dict[str, int] = dict.fromkeys(shape.layers[-1], 0)
    for _dependent, dependency in shape.declared:
        if dependency in dependents:
            dependents[dependency] += 1
    platform = sorted(dependents, key=lambda name: (-dependents[name], name))
    targets = [f"resource:default/{hub}" for hub in shape.hubs] + [f"component:default/{n}" for n in platform]
    if len(targets) < count:
        raise ValueError(f"{scenario.name}: {len(targets)} first asks for {count}")
    return targets[:count]


def burst(bot: Bot, fake: FakeSlack, label: str, targets: Sequence[str]) -> tuple[dict[str, Any], Window]:
    """Every target asked at once: the slowest ack and the answers' p50 / p99."""
    arrived = time.time_ns()
    with ThreadPoolExecutor(max_workers=len(targets)) as pool:
        done = list(
            pool.map(lambda i: one_command(bot, fake, f"burst-{label.split()[0]}-{i}", targets[i]), range(len(targets)))
        )
    window = Window(f"{label}: {len(targets)} at once", arrived, time.time_ns(), len(targets))
    return {"ack_max_ms": round(max(a for a, _ in done) * 1e3, 1), "answered": summary_ms([t for _, t in done])}, window


def measure(
    bot: Bot, fake: FakeSlack, receiver: OtlpReceiver, hub: str, leaf: str, fresh: Sequence[str]
) -> dict[str, Any]:
    """The repeated figures (hub, leaf, the two at once), then the first-ask ones on `fresh`: its
    first SEQUENTIAL one at a time, the next CONCURRENT at once."""
    figures: dict[str, Any] = {}
    windows: list[Window] = []
    for label, target in (("hub", hub), ("leaf", leaf)):
        one_command(bot, fake, f"warm-{label}", target)
        before = full_texts(fake)
        arrived = time.time_ns()
        answered = [one_command(bot, fake, f"{label}-{i}", target)[1] for i in range(SEQUENTIAL)]
        windows.append(Window(f"repeated {label}, one at a time", arrived, time.time_ns(), SEQUENTIAL))
        figures[label] = summary_ms(answered)
        if label == "hub":
            # Full texts go up after their answers, in the gaps between them: all must still arrive.
            began = time.perf_counter()
            expected = before + SEQUENTIAL
            fake.wait_for(lambda: full_texts(fake) >= expected, timeout=120)  # noqa: B023 (waited on here)
            figures[label]["full_texts_done_after_last_answer_s"] = round(time.perf_counter() - began, 2)
    figures["burst_50"], window = burst(
        bot, fake, "repeated (hub and leaf)", [(leaf, hub)[i % 2] for i in range(CONCURRENT)]
    )
    windows.append(window)
    uploads_done(fake)
    arrived = time.time_ns()
    answered = [one_command(bot, fake, f"first-{i}", target)[1] for i, target in enumerate(fresh[:SEQUENTIAL])]
    windows.append(Window("first ask, one at a time", arrived, time.time_ns(), SEQUENTIAL))
    figures["first_ask"] = summary_ms(answered)
    uploads_done(fake)
    figures["first_ask_burst_50"], window = burst(bot, fake, "first ask", fresh[SEQUENTIAL:])
    windows.append(window)
    receiver.wait_for(lambda: settled(receiver, windows), timeout=60)
    figures["stages_ms"] = stage_table(receiver, windows)
    return figures


def chosen(argv: Sequence[str] | None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="layered-10k only")
    parser.add_argument("--scenario", choices=scenario_names([], ""), help="this scenario only")
    args = parser.parse_args(argv)
    return [args.scenario] if args.scenario else scenario_names(["--quick"] if args.quick else [], "")


def main(argv: Sequence[str] | None = None) -> None:
    names = chosen(argv)
    results: dict[str, Any] = {}
    tables = []
    for name, catalog, db, scratch in synced_sqlite(names):
        with slack_api() as fake, otlp_receiver() as receiver:
            bot = start_bot(
                scratch / f"{name}.log",
                PORT="0", SLACK_BOT_TOKEN="xoxb-bench", SLACK_SIGNING_SECRET=SECRET, SLACK_API_URL=fake.url,
                DATABASE_URL=db, ONCALL_GRAPH_SYNC_INTERVAL="3600",
                OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_BSP_SCHEDULE_DELAY="500",
                OTEL_BSP_MAX_QUEUE_SIZE="8192",
            )  # fmt: skip
            try:
                fresh = first_asks(catalog.scenario, SEQUENTIAL + CONCURRENT)
                results[name] = measure(bot, fake, receiver, catalog.hub, catalog.leaf, fresh)
            finally:
                stop(bot)
        stages = results[name]["stages_ms"]
        for kind in ("repeated", "first ask"):
            tables.append(markdown(f"{name}, {kind}", {k: v for k, v in stages.items() if k.startswith(kind)}))
            print(tables[-1])
        for label, key in (("repeated hub", "hub"), ("repeated leaf", "leaf"), ("first ask", "first_ask")):
            f = results[name][key]
            print(f"{name:>13} /blast-radius {label:>13}: p50 {f['p50']:7.1f} ms  p99 {f['p99']:7.1f} ms")
        drained = results[name]["hub"]["full_texts_done_after_last_answer_s"]
        print(f"{name:>13} every hub full text was uploaded {drained} s after the last answer")
        for label, key in (("repeated", "burst_50"), ("first ask", "first_ask_burst_50")):
            b = results[name][key]
            print(
                f"{name:>13} 50 at once, {label}: slowest ack {b['ack_max_ms']:.0f} ms, answered p50 "
                f"{b['answered']['p50']:.0f} ms p99 {b['answered']['p99']:.0f} ms"
            )
    OUT.mkdir(exist_ok=True)
    (OUT / "slack_results.json").write_text(json.dumps(results, indent=2))
    (OUT / "slack_stages.md").write_text("\n\n".join(tables) + "\n")


if __name__ == "__main__":
    main()

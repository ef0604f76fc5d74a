"""Slack benchmark: `/blast-radius` end to end (signed request in, message out at a fake Slack API),
sequentially and 50 at once, against `oncall-graph serve` on a synced catalog.

    python -m bench.slack_bench            layered-10k and layered-100k
    python -m bench.slack_bench --quick    layered-10k only

The bot exports its traces to a fake OTLP collector (the operator's OTEL_EXPORTER_OTLP_ENDPOINT), and
each answer's stage spans are tabulated (`bench/slack_stages.py`): `bench/out/slack_stages.md`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.generate import OUT
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


def measure(bot: Bot, fake: FakeSlack, receiver: OtlpReceiver, hub: str, leaf: str) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    windows: list[Window] = []
    for label, target in (("hub", hub), ("leaf", leaf)):
        one_command(bot, fake, f"warm-{label}", target)
        before = full_texts(fake)
        arrived = time.time_ns()
        answered = [one_command(bot, fake, f"{label}-{i}", target)[1] for i in range(SEQUENTIAL)]
        windows.append(Window(f"{label}, one at a time", arrived, time.time_ns(), SEQUENTIAL))
        figures[label] = summary_ms(answered)
        if label == "hub":
            # Full texts go up after their answers, in the gaps between them: all must still arrive.
            began = time.perf_counter()
            expected = before + SEQUENTIAL
            fake.wait_for(lambda: full_texts(fake) >= expected, timeout=120)  # noqa: B023 (waited on here)
            figures[label]["full_texts_done_after_last_answer_s"] = round(time.perf_counter() - began, 2)
    arrived = time.time_ns()
    with ThreadPoolExecutor(max_workers=CONCURRENT) as pool:
        burst = list(
            pool.map(lambda i: one_command(bot, fake, f"burst-{i}", hub if i % 2 else leaf), range(CONCURRENT))
        )
    windows.append(Window(f"{CONCURRENT} at once (hub and leaf)", arrived, time.time_ns(), CONCURRENT))
    figures["burst_50"] = {
        "ack_max_ms": round(max(a for a, _ in burst) * 1e3, 1),
        "answered": summary_ms([done for _, done in burst]),
    }
    receiver.wait_for(lambda: settled(receiver, windows), timeout=60)
    figures["stages_ms"] = stage_table(receiver, windows)
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    names = scenario_names(argv, __doc__ or "")
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
                results[name] = measure(bot, fake, receiver, catalog.hub, catalog.leaf)
            finally:
                stop(bot)
        tables.append(markdown(name, results[name]["stages_ms"]))
        print(tables[-1])
        for label in ("hub", "leaf"):
            f = results[name][label]
            print(f"{name:>13} /blast-radius {label:>4}: p50 {f['p50']:7.1f} ms  p99 {f['p99']:7.1f} ms")
        drained = results[name]["hub"]["full_texts_done_after_last_answer_s"]
        print(f"{name:>13} every hub full text was uploaded {drained} s after the last answer")
        burst = results[name]["burst_50"]
        print(
            f"{name:>13} 50 at once: slowest ack {burst['ack_max_ms']:.0f} ms, answered p50 "
            f"{burst['answered']['p50']:.0f} ms p99 {burst['answered']['p99']:.0f} ms"
        )
    OUT.mkdir(exist_ok=True)
    (OUT / "slack_results.json").write_text(json.dumps(results, indent=2))
    (OUT / "slack_stages.md").write_text("\n\n".join(tables) + "\n")


if __name__ == "__main__":
    main()

"""Deploy load benchmark: 100 deploy events a second for a minute into one replica, while both
replicas answer Slack; every accepted event must be stored once, and answers must stay as fast.

    python -m bench.deploy_load_bench                layered-10k and layered-100k
    python -m bench.deploy_load_bench --quick        layered-10k only
    python -m bench.deploy_load_bench --seconds 20   a shorter load (and baseline)
    python -m bench.deploy_load_bench --apart        the sender and PostgreSQL as if on hosts of their own
    python -m bench.deploy_load_bench --rounds 1     one baseline and one load (3 by default)

Two `oncall-graph serve` on one PostgreSQL (bench/replicas.py). Answers are asked one at a time,
four a second (ASK_EVERY), round the four of `/suspects svc-0 6h` and `/blast-radius HUB` on the
leader and the follower (signed Slack request in, answer received at the fake Slack), in phases
of their own, each also measuring the CPU every process used. Baseline and load alternate ROUNDS
times, their answers pooled; the rest follow once:
- baseline: no deploy traffic;
- load: a sender process (so that its work is not the harness's GIL) POSTs signed native events to
  the leader on a monotonic schedule, each with a unique id, for a service drawn from thousands of
  the catalog's; one POST in 20 repeats an earlier event, body and id. Then the store is counted:
  every id answered 202 stored exactly once, and a repeat stored nothing (after the last round);
- settled: the same answers again with no traffic, once the last deploy is shown on both replicas,
  so that answers grown by the deploys they now list are told apart from answers slowed by the load;
- two controls, with no deploy traffic, while another process keeps part of a core busy in 10 ms
  bursts: as much as the load added outside the bots (the sender, PostgreSQL, the harness), then as
  much as the whole machine added. They show what CPU contention alone does to the answers' p99 on
  this machine, where the sender and the database share the bots' cores.

With --apart the sender (and the controls' process) and PostgreSQL run under SCHED_IDLE: they get a
core only when no thread of the bots or the harness wants one, as if they ran on hosts of their own
(in production GitHub sends from elsewhere and the database has its own machine). What the answers
lose then is the bots' own. Nice 19 is not enough for that: under the kernel's EEVDF scheduler a
woken thread waits out a nice-19 process's slice as it would a normal one's (bench/wake_bench.py:
with two processes busy 40% each, a ping-pong's p99 went from 0.30 to 4.35 ms, 4.26 at nice 19,
0.34 under SCHED_IDLE).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, select

from bench.generate import OUT, Catalog
from bench.measure import CpuUse, named, status_mb, summary_ms
from bench.replicas import shown_after, synced_scenarios, two_replicas
from bench.sync_bench import scenario_names
from sync.push import ENDPOINTS
from sync.store import schema
from tests.e2e.conftest import Bot
from tests.e2e.webhook_posts import post_native
from tests.fakes.slack_api import FakeSlack, slack_api

RATE = 100.0  # events a second, redeliveries included
LOAD_SECONDS = 60.0
BASELINE_SECONDS = 60.0  # as long as the load: both p99s from as many answers
SETTLED_SECONDS = 20.0
SENDERS = 32  # threads of the sender, so that it keeps to its schedule while each POST waits for its batch
REDELIVER_EVERY = 20  # every 20th POST repeats the event posted 10 slots before it
SERVICES = 5000  # svc-1 .. svc-5000 take the deploys (layered-10k has 7,700 services)
# Seconds from one request to the next, whichever probe: four answers a second across both
# replicas, far above an incident channel's pace. Back to back (12 a second) the answers' own
# background work (each blast radius's full-text file and picture, ~90 ms of CPU) kept each
# replica ~80% busy before any deploy came, and the probe measured mostly itself.
ASK_EVERY = 0.25
SENDER_SETUP = 3.0  # seconds the sender has to build its clients before its first slot, off the clock
SOURCE = ENDPOINTS["deploys"][0]
PHASES = ("baseline", "load", "settled", "control_others", "control_machine")
# Baseline and load alternate this many times: each p99 then comes from three times the answers (one
# minute's p99 of all four is the third slowest of ~240, and moved by a third from run to run), and a
# drift (the deploys the answers come to list, the machine's) falls on both alike.
ROUNDS = 3
HOG_CYCLE = 0.01  # seconds: a control's other process works in bursts, as the sender and PostgreSQL do

Posted = dict[str, Any]  # one POST: slot, id, redelivery, status, stored, repeated, latency


def plan(seconds: float, rate: float, seed: int) -> list[tuple[str, bool, bytes]]:
    """(id, redelivery, body) for each slot; deployed_at rises by a millisecond a slot and all lie in
    the past, so the last event is the newest in every answer that lists it."""
    rng = random.Random(seed)
    slots = int(seconds * rate)
    start = datetime.now(UTC) - timedelta(milliseconds=slots + 1000)
    run = uuid.uuid4().hex[:6]
    planned: list[tuple[str, bool, bytes]] = []
    for i in range(slots):
        if i % REDELIVER_EVERY == REDELIVER_EVERY - 1:
            deploy_id, _, body = planned[i - 10]
            planned.append((deploy_id, True, body))
            continue
        event = {
            "id": f"load-{run}-{i:05d}", "service": f"svc-{rng.randint(1, SERVICES)}", "version": f"v{i}",
            "deployed_at": (start + timedelta(milliseconds=i)).isoformat(),
        }  # fmt: skip
        planned.append((str(event["id"]), False, json.dumps(event).encode()))
    return planned


def send_load(
    url: str, planned: list[tuple[str, bool, bytes]], rate: float, seconds: float, start_at: float
) -> tuple[float, list[Posted]]:
    """POST each planned event at its slot's time (slot / rate after the start) from SENDERS threads;
    a thread behind schedule posts at once, and none starts a POST after `seconds`: a leader that
    cannot keep up shows as a lower achieved rate, not a longer run. Runs in a process of its own.
    (seconds taken, posts)."""
    slots = iter(range(len(planned)))
    taking = threading.Lock()
    posted: list[Posted] = []
    # The first slot is due at `start_at` (time.time()), once every thread holds its client: building
    # 32 of them takes most of a second of CPU, which inside the load slowed the answers measured and
    # sent the slots due meanwhile together, a burst of ~45 POSTs.
    ready = threading.Barrier(SENDERS + 1)
    began = 0.0

    def sender() -> None:
        with httpx.Client(timeout=30, limits=httpx.Limits(max_keepalive_connections=0)) as http:
            ready.wait()  # every client built
            ready.wait()  # `began` set
            while True:
                with taking:
                    slot = next(slots, None)
                if slot is None or time.monotonic() - began >= seconds:
                    return
                time.sleep(max(0.0, began + slot / rate - time.monotonic()))
                deploy_id, redelivery, body = planned[slot]
                sent = time.perf_counter()
                answer = post_native(http, url, body)
                latency = time.perf_counter() - sent
                reply = answer.json() if answer.status_code == 202 else {}
                posted.append({
                    "slot": slot, "id": deploy_id, "redelivery": redelivery, "status": answer.status_code,
                    "stored": reply.get("stored", []), "repeated": reply.get("repeated", []), "latency": latency,
                })  # fmt: skip

    threads = [threading.Thread(target=sender) for _ in range(SENDERS)]
    for thread in threads:
        thread.start()
    ready.wait()
    time.sleep(max(0.0, start_at - time.time()))
    began = time.monotonic()
    ready.wait()
    for thread in threads:
        thread.join()
    return time.monotonic() - began, posted


def burn(share: float, seconds: float, start_at: float) -> float:
    """Keep `share` of one core busy (at most 1.0) from `start_at` (time.time()) for `seconds`, in
    10 ms cycles, touching nothing of the bots: the control phases' other process. Its CPU seconds."""
    time.sleep(max(0.0, start_at - time.time()))
    began, used = time.monotonic(), time.process_time()
    cycle = 0
    while (now := time.monotonic()) - began < seconds:
        busy_until = now + HOG_CYCLE * min(share, 1.0)
        while time.monotonic() < busy_until:
            pass
        cycle += 1
        time.sleep(max(0.0, began + cycle * HOG_CYCLE - time.monotonic()))
    return time.process_time() - used


def ask_answers(
    bots: dict[str, Bot], fake: FakeSlack, asks: dict[str, str], until: Callable[[], bool]
) -> dict[str, list[float]]:
    """Seconds from each signed request to its answer at the fake Slack, asked one at a time round every
    (replica, command) until `until()`; keyed `replica command`."""
    seconds: dict[str, list[float]] = {f"{r} {c}": [] for r in bots for c in asks}
    due = time.perf_counter()
    for replica, command in itertools.cycle([(r, c) for r in bots for c in asks]):
        if until():
            return seconds
        time.sleep(max(0.0, due - time.perf_counter()))
        due += ASK_EVERY  # an answer slower than that delays the next one, never overlaps it
        name = f"a-{uuid.uuid4().hex}"
        began = time.perf_counter()
        response = bots[replica].command(command, asks[command], fake.response_url(name))
        if response.status_code != 200:
            raise RuntimeError(f"{command} on the {replica}: HTTP {response.status_code}")
        fake.wait_for(functools.partial(fake.responses, name), timeout=60)
        seconds[f"{replica} {command}"].append(time.perf_counter() - began)
    raise AssertionError("unreachable")


def for_seconds(seconds: float) -> Callable[[], bool]:
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() >= deadline


def stored_counts(db: str) -> Counter[str]:
    """How many fact rows (live or not) the store holds of each pushed deploy id."""
    f = schema.facts
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            query = select(f.c.payload).where(f.c.source == SOURCE, f.c.kind == "deploy")
            return Counter(json.loads(payload)["id"] for payload in conn.execute(query).scalars())
    finally:
        engine.dispose()


def check_stored(posted: list[Posted], counts: Counter[str]) -> dict[str, Any]:
    """Every id answered 202 is stored exactly once; a repeat was answered `repeated`, never `stored`."""
    accepted = {p["id"] for p in posted if p["status"] == 202}
    claimed = Counter(i for p in posted for i in p["stored"])
    repeats = [p for p in posted if p["redelivery"]]
    originals = {p["id"]: p for p in posted if not p["redelivery"]}
    return {
        "posts": len(posted),
        "statuses": dict(Counter(str(p["status"]) for p in posted)),
        "accepted_ids": len(accepted),
        "stored_once": sum(1 for i in accepted if counts[i] == 1),
        "missing": sorted(i for i in accepted if counts[i] == 0)[:20],
        "duplicates": sorted(i for i, n in counts.items() if n > 1)[:20],
        "stored_not_accepted": sorted(set(counts) - accepted)[:20],
        "answered_stored_twice": sorted(i for i, n in claimed.items() if n > 1)[:20],
        "redeliveries": len(repeats),
        "redeliveries_answered_repeated": sum(1 for p in repeats if p["id"] in p["repeated"]),
        # A redelivery posted ~100 ms after its original can be written first: then it is the one
        # answered `stored`. Either way one of the two says stored and the other repeated.
        "pairs_stored_by_one": sum(1 for p in repeats if _stored_by_one(p, originals.get(p["id"]))),
    }


def _stored_by_one(repeat: Posted, original: Posted | None) -> bool:
    if original is None:
        return False
    i = repeat["id"]
    said = sorted((i in p["stored"], i in p["repeated"]) for p in (original, repeat))
    return said == [(False, True), (True, False)]


def run_apart(pids: Sequence[int]) -> None:
    """SCHED_IDLE: these processes take a core only when nothing else wants it, and give it up the
    moment another thread wakes. PostgreSQL's backends started later inherit it from the
    postmaster, as the sender's threads do from the process's main thread."""
    for pid in pids:
        try:
            os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
        except ProcessLookupError:
            continue  # a backend gone meanwhile


def measure(
    catalog: Catalog, db: str, scratch: Path, seconds: float, *, apart: bool = False, rounds: int = ROUNDS
) -> dict[str, Any]:
    asks = {"/suspects": "svc-0 6h", "/blast-radius": catalog.hub}
    answers: dict[str, dict[str, list[float]]] = {phase: {} for phase in PHASES}
    shares: dict[str, list[dict[str, float]]] = {phase: [] for phase in PHASES}
    figures: dict[str, Any] = {"rounds": rounds}
    posted: list[Posted] = []
    planned_posts, taken, shown = 0, 0.0, []
    spawn = get_context("spawn")
    with slack_api() as fake, two_replicas(catalog, db, fake, scratch) as (leader, follower), \
            ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:  # fmt: skip
        sender = pool.submit(os.getpid).result()  # started and its imports done before any clock
        cpu = CpuUse({
            "leader": lambda: [leader.proc.pid], "follower": lambda: [follower.proc.pid],
            "postgres": lambda: named("postgres"), "sender": lambda: [sender], "harness": lambda: [os.getpid()],
        })  # fmt: skip
        if apart:
            run_apart([sender, *named("postgres")])
        bots = {"leader": leader, "follower": follower}

        def asked(phase: str, until: Callable[[], bool]) -> None:
            with cpu.over() as used:
                for key, samples in ask_answers(bots, fake, asks, until).items():
                    answers[phase].setdefault(key, []).extend(samples)
            shares[phase].append(used)

        ask_answers(bots, fake, asks, for_seconds(2))  # warm: first answers build what later ones reuse
        baseline_seconds = min(BASELINE_SECONDS, seconds)

        def rss() -> dict[str, int]:
            return {r: round(status_mb("VmRSS", b.proc.pid)) for r, b in bots.items()}

        for number in range(rounds):
            asked("baseline", for_seconds(baseline_seconds))
            figures.setdefault("rss_mb", {"baseline": rss()})
            planned = plan(seconds, RATE, seed=catalog.scenario.seed + number)
            start_at = time.time() + SENDER_SETUP
            sending = pool.submit(send_load, leader.url, planned, RATE, seconds, start_at)
            time.sleep(max(0.0, start_at - time.time()))
            asked("load", sending.done)
            took, sent = sending.result()
            ended = time.perf_counter()
            planned_posts, taken, posted = planned_posts + len(planned), taken + took, posted + sent
            last = max((p["slot"] for p in sent if p["status"] == 202 and not p["redelivery"]), default=0)
            last_id, _, last_body = planned[last]
            last_service = json.loads(last_body)["service"]
            shown.append({r: shown_after(b, fake, last_service, last_id, ended) for r, b in bots.items()})
        figures["rss_mb"]["load"] = rss()
        figures["last_deploy_shown_s"] = {r: max(s[r] for s in shown) for r in bots}
        asked("settled", for_seconds(min(SETTLED_SECONDS, seconds)))
        figures["rss_mb"]["settled"] = rss()
        # Controls: no deploy traffic, while another process uses as much CPU as the load added
        # outside the bots (the sender, PostgreSQL, the harness), then as much as the whole machine
        # added. If the first alone moves the answers' p99, no change inside the bots can undo it.
        base, load = mean_shares(shares["baseline"]), mean_shares(shares["load"])
        added = {k: load[k] - base[k] for k in load}
        figures["control_shares"] = {
            "control_others": round(max(0.0, added["machine"] - added["leader"] - added["follower"]), 2),
            "control_machine": round(max(0.0, added["machine"]), 2),
        }
        for phase, share in figures["control_shares"].items():
            start_at = time.time() + 0.5
            hog = pool.submit(burn, share, baseline_seconds, start_at)
            time.sleep(max(0.0, start_at - time.time()))
            asked(phase, hog.done)
            hog.result()  # a control whose process failed is no control
    figures["cpu"] = {phase: mean_shares(shares[phase]) for phase in PHASES}
    figures["rate"] = {"planned": RATE, "posts": len(posted), "planned_posts": planned_posts,
                       "seconds": round(taken, 2), "achieved": round(len(posted) / taken, 1),
                       "post_latency": summary_ms([p["latency"] for p in posted])}  # fmt: skip
    figures["stored"] = check_stored(posted, stored_counts(db))
    for phase in PHASES:
        # Per probe, ~60 answers a minute; all four together, the p99 of ~240 a minute is its third slowest.
        every = [s for samples in answers[phase].values() for s in samples]
        figures[phase] = {**{key: summary_ms(samples) for key, samples in answers[phase].items()},
                          "all": summary_ms(every)}  # fmt: skip
    for phase in ("load", *figures["control_shares"]):
        figures[f"p99_ratio_{phase}_to_baseline"] = {
            key: round(figures[phase][key]["p99"] / figures["baseline"][key]["p99"], 2) for key in figures[phase]
        }
    return figures


def mean_shares(rounds: Sequence[dict[str, float]]) -> dict[str, float]:
    """Each group's CPU share averaged over the rounds of a phase."""
    return {group: round(sum(r[group] for r in rounds) / len(rounds), 2) for group in rounds[0]}


def report(name: str, f: dict[str, Any]) -> None:
    r, s = f["rate"], f["stored"]
    post = r["post_latency"]
    print(f"{name:>13} {f['rounds']} rounds of baseline and load; {r['posts']} POSTs in {r['seconds']} s: "
          f"{r['achieved']}/s (planned {r['planned']:.0f}/s), "
          f"POST p50 {post['p50']:.0f} ms p99 {post['p99']:.0f} ms; statuses {s['statuses']}")  # fmt: skip
    print(f"{name:>13} {s['accepted_ids']} ids accepted, {s['stored_once']} stored once, {len(s['missing'])} missing, "
          f"{len(s['duplicates'])} duplicated, {len(s['stored_not_accepted'])} stored unaccepted; "
          f"{s['redeliveries']} redeliveries, {s['redeliveries_answered_repeated']} answered repeated, "
          f"{s['pairs_stored_by_one']} pairs answered stored by one of the two")  # fmt: skip
    shown = f["last_deploy_shown_s"]
    print(f"{name:>13} last deploy shown {shown['leader']:.2f} s (leader), {shown['follower']:.2f} s (follower) "
          f"after the load")  # fmt: skip
    print(f"{name:>13} RSS MB after each phase: {f['rss_mb']}")
    for phase, shares in f["cpu"].items():
        used = ", ".join(f"{group} {share:.0%}" for group, share in shares.items())
        print(f"{name:>13} CPU, {phase}, of one core ({os.cpu_count()} here): {used}")
    controls = f["control_shares"]
    print(
        f"{name:>13} controls, no traffic, another process busy: {controls['control_others']:.0%} of a core "
        f"(what the load added outside the bots), then {controls['control_machine']:.0%} (what it added in all)"
    )
    heads = (f"{'baseline p50/p99':>17} {'load p50/p99':>15} {'ratio':>6} {'settled':>12} "
             f"{'ctl others':>12} {'ratio':>6} {'ctl machine':>12} {'ratio':>6}")  # fmt: skip
    print(f"{name:>13} {'answer, ms':<24} {heads}")
    for key, base in f["baseline"].items():
        cells = [f"{base['p50']:7.0f} /{base['p99']:6.0f}"]
        for phase in PHASES[1:]:
            shown = f[phase][key]
            cells.append(f"{shown['p50']:5.0f} /{shown['p99']:5.0f}")
            if (ratios := f.get(f"p99_ratio_{phase}_to_baseline")) is not None:
                cells.append(f"{ratios[key]:5.2f}x")
        print(f"{name:>13} {key:<24} {'  '.join(cells)}")


def main(argv: Sequence[str] | None = None) -> None:
    seconds = argparse.ArgumentParser(add_help=False)
    seconds.add_argument("--seconds", type=float, default=LOAD_SECONDS)
    seconds.add_argument("--apart", action="store_true")
    seconds.add_argument("--rounds", type=int, default=ROUNDS)
    args, rest = seconds.parse_known_args(argv)
    names = scenario_names(rest, __doc__ or "")
    results: dict[str, Any] = {}
    for name, catalog, db, scratch in synced_scenarios(names, "bench_deploy_load"):
        results[name] = measure(catalog, db, scratch, args.seconds, apart=args.apart, rounds=args.rounds)
        report(name, results[name])
    OUT.mkdir(exist_ok=True)
    (OUT / f"deploy_load_results{'_apart' if args.apart else ''}.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

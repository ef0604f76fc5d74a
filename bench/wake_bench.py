"""How long a woken thread waits for a core while other processes keep the machine busy, by how
those processes are scheduled: the check behind `deploy_load_bench --apart`.

    python -m bench.wake_bench               1500 round trips per case (about 2 minutes)
    python -m bench.wake_bench --trips 300   fewer

Two processes ping-pong a byte over pipes, 10 ms apart, each reply after a little work, as a
request and its answer do; meanwhile `BUSY` processes burn 4 ms of every 10 ms, as the sender and
PostgreSQL do under the load, at normal priority, at nice 19, and under SCHED_IDLE. A round trip
is the wake-up of each side plus their work; what the busy processes add to its p99 is what they
would add to an answer's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from bench.measure import summary_ms

BUSY = 2  # one per core here: a single busy process leaves the other core free
GAP = 0.01  # seconds between round trips
_BURN = """
import sys, time
began, cycle = time.monotonic(), 0
while time.monotonic() - began < float(sys.argv[1]):
    until = time.monotonic() + 0.004
    while time.monotonic() < until:
        pass
    cycle += 1
    time.sleep(max(0.0, began + cycle * 0.01 - time.monotonic()))
"""
CASES = ("nothing busy", "busy", "busy at nice 19", "busy under SCHED_IDLE")


@contextmanager
def busy_processes(case: str, seconds: float) -> Iterator[None]:
    procs = [] if case == "nothing busy" else [
        subprocess.Popen([sys.executable, "-c", _BURN, str(seconds)]) for _ in range(BUSY)
    ]  # fmt: skip
    try:
        for proc in procs:
            if case.endswith("nice 19"):
                os.setpriority(os.PRIO_PROCESS, proc.pid, 19)
            elif case.endswith("SCHED_IDLE"):
                os.sched_setscheduler(proc.pid, os.SCHED_IDLE, os.sched_param(0))
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def round_trips(trips: int) -> list[float]:
    """Seconds of each ping-pong with a forked answerer that works ~0.5 ms before each reply."""
    ping_r, ping_w = os.pipe()
    pong_r, pong_w = os.pipe()
    child = os.fork()
    if child == 0:
        while os.read(ping_r, 1) == b"p":
            sum(range(20_000))
            os.write(pong_w, b"x")
        os._exit(0)
    seconds = []
    try:
        for _ in range(trips):
            time.sleep(GAP)
            began = time.perf_counter()
            os.write(ping_w, b"p")
            os.read(pong_r, 1)
            seconds.append(time.perf_counter() - began)
    finally:
        os.write(ping_w, b"q")
        os.waitpid(child, 0)
        for fd in (ping_r, ping_w, pong_r, pong_w):
            os.close(fd)
    return seconds


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trips", type=int, default=1500)
    trips = parser.parse_args(argv).trips
    print(f"{BUSY} processes busy 40% each, {os.cpu_count()} cores; round trips of {trips}, ms:")
    for case in CASES:
        with busy_processes(case, seconds=trips * GAP * 2 + 5):
            time.sleep(0.3)  # the busy processes started
            shown = summary_ms(round_trips(trips))
        print(f"  {case:<24} p50 {shown['p50']:5.2f}  p99 {shown['p99']:5.2f}")


if __name__ == "__main__":
    main()

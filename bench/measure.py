"""Timers, percentiles and peak memory (this process and the worker processes it starts)."""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType


def repeat(fn: Callable[[], object], runs: int) -> list[float]:
    """Wall-clock seconds of each of `runs` calls."""
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - began)
    return samples


def summary_ms(samples: Sequence[float]) -> dict[str, float]:
    """p50 and p99 by nearest rank (with 20 runs p99 is the slowest run), in milliseconds."""
    ordered = sorted(samples)
    return {"p50": _rank(ordered, 50) * 1e3, "p99": _rank(ordered, 99) * 1e3, "runs": len(ordered)}


def _rank(ordered: Sequence[float], percent: float) -> float:
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


@contextmanager
def stopwatch(into: dict[str, float], key: str) -> Iterator[None]:
    began = time.perf_counter()
    try:
        yield
    finally:
        into[key] = into.get(key, 0.0) + time.perf_counter() - began


def status_mb(field: str, pid: int | str = "self") -> float:
    """A `VmHWM`/`VmRSS` line of /proc/<pid>/status, in MB (0 when the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{parent}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                found.append(child)
                queue.append(child)
    return found


class WorkerPeak:
    """Samples the high-water RSS of every descendant process (the parallel parser's workers).

    A worker's VmHWM only grows, so sampling every few milliseconds misses at most the last
    few milliseconds of a worker's life. Also tracks the largest sum of RSS over the process tree.
    """

    def __init__(self, interval: float = 0.02) -> None:
        self.worker_mb = 0.0
        self.tree_mb = 0.0
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WorkerPeak:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._sample()

    def _sample(self) -> None:
        children = _descendants(os.getpid())
        self.worker_mb = max([self.worker_mb, *(status_mb("VmHWM", pid) for pid in children)])
        tree = status_mb("VmRSS") + sum(status_mb("VmRSS", pid) for pid in children)
        self.tree_mb = max(self.tree_mb, tree)


def cpu_seconds(pids: Iterable[int]) -> float:
    """CPU seconds (user and system, their reaped children's too) the processes have used so far;
    a process gone counts nothing."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def machine_seconds() -> tuple[float, float]:
    """(busy, stolen) CPU seconds of the whole machine so far, every core (/proc/stat): stolen is
    the time a virtual machine's cores waited for the host, which slows everything run meanwhile."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    tick = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq) / tick, steal / tick


class CpuUse:
    """The CPU each group of processes uses over a `with cpu.over() as shares:` block: `shares`
    is filled, on leaving it, with each group's CPU seconds per second (1.0 is one core busy),
    and the whole machine's: `machine` busy, `stolen` by the host (a noisy neighbour's share)."""

    def __init__(self, groups: Mapping[str, Callable[[], Iterable[int]]]) -> None:
        self._groups = dict(groups)  # name -> its pids, asked again at each end (backends come and go)

    @contextmanager
    def over(self) -> Iterator[dict[str, float]]:
        shares: dict[str, float] = {}
        used = {name: cpu_seconds(pids()) for name, pids in self._groups.items()}
        busy, stolen = machine_seconds()
        began = time.perf_counter()
        yield shares
        elapsed = time.perf_counter() - began
        for name, pids in self._groups.items():
            shares[name] = round((cpu_seconds(pids()) - used[name]) / elapsed, 2)
        busy_now, stolen_now = machine_seconds()
        shares["machine"] = round((busy_now - busy) / elapsed, 2)
        shares["stolen"] = round((stolen_now - stolen) / elapsed, 2)


def named(command: str) -> list[int]:
    """Pids of the processes whose command name is `command` (PostgreSQL's server and backends)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == command:
                    found.append(int(entry))
            except OSError:
                continue
    return found

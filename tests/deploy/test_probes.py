"""The Deployment's probes and the image's HEALTHCHECK, run against a real `oncall-graph serve` as the
kubelet and Docker would run them: a pod with a graph is ready; a pod that has none is kept alive."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.deploy.files import ROOT, final_stage, kubernetes_documents, one, pod_spec

ACME = ROOT / "examples" / "acme"


@dataclass(frozen=True)
class Pod:
    port: int
    log: Path


def bot_container() -> dict[str, Any]:
    (only,) = pod_spec(kubernetes_documents()["Deployment/oncall-graph"])["containers"]
    assert isinstance(only, dict)
    return only


def probe(pod: Pod, name: str) -> bool:
    """One probe attempt by the kubelet's rules: HTTP 200-399 or an accepted TCP connection."""
    spec = bot_container()[name]
    named = {p["name"]: p["containerPort"] for p in bot_container()["ports"]}
    action = spec.get("httpGet") or spec["tcpSocket"]
    assert named.get(action["port"], action["port"]) == 3000  # the pod's port; here the test server's
    timeout = spec.get("timeoutSeconds", 1)
    if "httpGet" in spec:
        try:
            status = httpx.get(f"http://127.0.0.1:{pod.port}{action['path']}", timeout=timeout).status_code
        except httpx.HTTPError:
            return False
        return 200 <= status < 400
    try:
        socket.create_connection(("127.0.0.1", pod.port), timeout=timeout).close()
    except OSError:
        return False
    return True


def docker_healthcheck(pod: Pod) -> int:
    command = one(final_stage(), "HEALTHCHECK").exec_form()
    assert command[0] == "python"
    env = {"PATH": os.environ.get("PATH", ""), "PORT": str(pod.port)}  # the image sets PORT; Docker passes it
    return subprocess.run([sys.executable, *command[1:]], env=env, capture_output=True, timeout=30).returncode


@pytest.fixture
def start_pod(tmp_path: Path) -> Iterator[Any]:
    started: list[subprocess.Popen[bytes]] = []

    def start(**settings: str) -> Pod:
        log = tmp_path / f"serve-{len(started)}.log"
        base = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_"))}
        env = {**base, "PYTHONPATH": str(ROOT), "PORT": "0", "DATABASE_URL": f"sqlite:///{tmp_path / 'g.db'}",
               "ONCALL_GRAPH_SYNC_INTERVAL": "2", **settings}  # fmt: skip
        with log.open("w") as out:
            proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, stdout=out, stderr=out,
                                    cwd=tmp_path)  # fmt: skip
        started.append(proc)
        found = wait_for(lambda: re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read_text()), log)
        return Pod(int(found.group(1)), log)

    yield start
    for proc in started:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for(check: Any, log: Path, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out; the server's log:\n{log.read_text()}")


def test_a_pod_with_a_graph_passes_every_probe_and_the_docker_healthcheck(start_pod: Any) -> None:
    pod = start_pod(ONCALL_GRAPH_CATALOG=str(ACME / "catalog"), ONCALL_GRAPH_DOCS=str(ACME / "runbooks"))
    assert probe(pod, "startupProbe")
    wait_for(lambda: probe(pod, "readinessProbe"), pod.log)
    assert probe(pod, "livenessProbe")
    assert docker_healthcheck(pod) == 0


def test_a_pod_that_has_no_graph_yet_is_not_ready_but_is_kept_alive(start_pod: Any, tmp_path: Path) -> None:
    # The catalog cannot be read, so no graph ever loads: the situation of a first sync still running.
    pod = start_pod(ONCALL_GRAPH_CATALOG=str(tmp_path / "not-there"))
    wait_for(lambda: "synced: graph version 0" in pod.log.read_text(), pod.log)  # a sync was tried and failed
    assert probe(pod, "startupProbe") and probe(pod, "livenessProbe"), "the kubelet would restart a loading pod"
    assert not probe(pod, "readinessProbe"), "Slack traffic would reach a pod without a graph"
    assert docker_healthcheck(pod) != 0


def test_the_docker_healthcheck_fails_when_nothing_listens() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    assert docker_healthcheck(Pod(free, Path("/dev/null"))) != 0

"""`oncall-graph serve` as a subprocess, a fake Slack Web API, and correctly signed requests."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from slack_sdk.signature import SignatureVerifier

from tests.fakes.slack_api import FakeSlack, slack_api

ROOT = Path(__file__).resolve().parents[2]
SECRET = "test-signing-secret"
ADMIN = "UADMIN"
ALERTS = "CALERTS"
# Slack gives every invocation its own trigger_id, and the bot answers one once: so does each test request.
_TRIGGERS = itertools.count(1)


def new_trigger() -> str:
    return f"{next(_TRIGGERS)}.{time.time_ns()}.test"


@dataclass
class Bot:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    handle: Any
    # One client for every request: `httpx.post` builds a client and its TLS context per call,
    # 10-170 ms of the benchmark's measured latency that was the harness, not the bot.
    # No keep-alive, so each request still opens its own connection as Slack's may.
    http: httpx.Client = field(
        default_factory=lambda: httpx.Client(timeout=10, limits=httpx.Limits(max_keepalive_connections=0))
    )

    def output(self) -> str:
        return self.log.read_text()

    def post(
        self, body: str, content_type: str, *, secret: str = SECRET, age: float = 0, **headers: str
    ) -> httpx.Response:
        timestamp = str(int(time.time() - age))
        signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body) or ""
        sent = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": signature,
            **headers,
        }
        return self.http.post(f"{self.url}/slack/events", content=body.encode(), headers=sent)

    def command(self, command: str, text: str, response_url: str, *, user: str = "UUSER", channel: str = "COPS",
                trigger_id: str = "", **kw: Any) -> httpx.Response:  # fmt: skip
        form = {
            "token": "x", "team_id": "T1", "channel_id": channel, "user_id": user, "command": command,
            "text": text, "response_url": response_url, "trigger_id": trigger_id or new_trigger(),
        }  # fmt: skip
        return self.post(urlencode(form), "application/x-www-form-urlencoded", **kw)

    def event(self, event: dict[str, Any], *, event_id: str, **headers: Any) -> httpx.Response:
        envelope = {
            "token": "x", "team_id": "T1", "api_app_id": "AOG", "type": "event_callback", "event_id": event_id,
            "event_time": int(time.time()), "event": event,
        }  # fmt: skip
        return self.post(json.dumps(envelope), "application/json", **headers)

    def action(self, action_id: str, value: str, response_url: str, *, user: str = "UUSER",
               channel: str = "COPS", trigger_id: str = "") -> httpx.Response:  # fmt: skip
        payload = {
            "type": "block_actions", "team": {"id": "T1"}, "user": {"id": user}, "channel": {"id": channel},
            "response_url": response_url, "trigger_id": trigger_id or new_trigger(), "api_app_id": "AOG",
            "actions": [{"action_id": action_id, "value": value, "type": "button", "block_id": "b"}],
        }  # fmt: skip
        return self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")

    def pagerduty(self, body: bytes, *secrets: str, signature: str | None = None) -> httpx.Response:
        """POST a PagerDuty v3 webhook, signed as PagerDuty signs: `v1=<hex>` per secret, comma-joined."""
        signed = ",".join("v1=" + hmac.new(s.encode(), body, hashlib.sha256).hexdigest() for s in secrets)
        header = signature if signature is not None else signed
        headers = {"Content-Type": "application/json", **({"X-PagerDuty-Signature": header} if header else {})}
        return self.http.post(f"{self.url}/pagerduty/webhook", content=body, headers=headers)


def _env(**extra: str) -> dict[str, str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "DATABASE_", "OTEL_", "ANTHROPIC_"))
    }
    return {**base, "PYTHONPATH": str(ROOT), **extra}


def start_bot(log: Path, **settings: str) -> Bot:
    handle = log.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "serve"], env=_env(**settings), stdout=handle, stderr=handle
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read_text())
        if found:
            url = found.group(1)
            while time.monotonic() < deadline:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    return Bot(url, proc, log, handle)
                time.sleep(0.1)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    handle.close()
    raise AssertionError(f"the bot did not become ready:\n{log.read_text()}")


def stop(bot: Bot) -> None:
    if bot.proc.poll() is None:
        bot.proc.send_signal(signal.SIGTERM)
        try:
            bot.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            bot.proc.kill()
            bot.proc.wait()
    bot.handle.close()
    bot.http.close()


RESTRICTED = """
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: vault-proxy
  annotations:
    oncall-graph/visibility: restricted
    oncall-graph/allowed-channels: CSECURITY
spec: {type: service, lifecycle: production, owner: group:secops, dependsOn: ["resource:redis"]}
---
apiVersion: backstage.io/v1alpha1
kind: Group
metadata: {name: secops}
spec: {type: team, children: []}
---
apiVersion: backstage.io/v1alpha1
kind: Component
metadata: {name: secrets-ui}
spec: {type: website, lifecycle: production, owner: group:platform, dependsOn: ["component:vault-proxy"]}
"""


def write_sources(folder: Path, *, extra_catalog: str = "", now: datetime | None = None) -> dict[str, str]:
    """The acme example, a deploy feed relative to now (so windows hold whatever the date), extras."""
    now = now or datetime.now(UTC)
    catalog = folder / "catalog"
    catalog.mkdir(parents=True)
    for file in (ROOT / "examples" / "acme" / "catalog").glob("*.yaml"):
        (catalog / file.name).write_text(file.read_text())
    (catalog / "restricted.yaml").write_text(RESTRICTED + extra_catalog)
    deploys = folder / "deploys.jsonl"
    recent = (now - timedelta(minutes=55)).strftime("%Y-%m-%dT%H:%M:%SZ")
    older = (now - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    deploys.write_text(
        json.dumps({"id": "r-8812", "service": "antifraud", "version": "v2.3.1", "deployed_at": recent,
                    "actor": "alice", "url": "https://ci.example.com/r-8812", "environment": "production"}) + "\n"
        + json.dumps({"id": "r-7000", "service": "ledger", "version": "v9", "deployed_at": older}) + "\n"
    )  # fmt: skip
    return {
        "ONCALL_GRAPH_CATALOG": str(catalog),
        "ONCALL_GRAPH_DEPLOYS": str(deploys),
        "ONCALL_GRAPH_DOCS": str(ROOT / "examples" / "acme" / "runbooks"),
        "ONCALL_GRAPH_ALIASES": str(ROOT / "examples" / "acme" / "aliases.yaml"),
    }


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with slack_api() as fake:
        yield fake


@pytest.fixture
def bot_factory(tmp_path: Path, fake_slack: FakeSlack) -> Iterator[Callable[..., Bot]]:
    started: list[Bot] = []

    def make(name: str = "bot", *, database_url: str = "", sources: dict[str, str] | None = None,
             **settings: str) -> Bot:  # fmt: skip
        env = {
            "PORT": "0", "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": fake_slack.url, "ONCALL_GRAPH_ADMINS": ADMIN, "ONCALL_GRAPH_WATCH_CHANNELS": ALERTS,
            "ONCALL_GRAPH_SYNC_INTERVAL": "30", "ONCALL_GRAPH_POLL_INTERVAL": "1",
            "DATABASE_URL": database_url or f"sqlite:///{tmp_path / 'graph.db'}",
            **(sources if sources is not None else write_sources(tmp_path / f"sources-{name}")),
            **settings,
        }  # fmt: skip
        bot = start_bot(tmp_path / f"{name}.log", **env)
        started.append(bot)
        return bot

    yield make
    for bot in started:
        stop(bot)

"""Deploy events for the webhooks, signed in the test as GitHub and a CI system sign them."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.e2e.conftest import Bot
from tests.e2e.test_slack_bot import only_response, text_of
from tests.fakes.slack_api import FakeSlack

Json = dict[str, Any]
GITHUB_SECRET = "gh-secret-new"
DEPLOY_SECRET = "ci-secret"
DEPLOY_TOKEN = "ci-token-1"


def sign(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def recent(minutes: float = 5) -> str:
    return (datetime.now(UTC) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def deployment_status(deployment_id: int, repo: str = "antifraud", *, state: str = "success") -> Json:
    """A `deployment_status` webhook body shaped like GitHub's documented example."""
    return {
        "action": "created",
        "deployment_status": {
            "id": deployment_id * 10, "state": state, "environment": "production",
            "target_url": f"https://github.com/acme/{repo}/actions/runs/{deployment_id}",
            "created_at": recent(), "updated_at": recent(), "creator": {"login": "octocat"},
        },
        "deployment": {
            "id": deployment_id, "sha": "a1b2c3d", "ref": "v4.0.0", "environment": "production",
            "creator": {"login": "alice"}, "created_at": recent(6), "payload": {},
        },
        "repository": {"name": repo, "full_name": f"acme/{repo}"},
        "sender": {"login": "octocat"},
    }  # fmt: skip


def github(bot: Bot, body: bytes, *, event: str = "deployment_status", delivery: str = "",
           secret: str | None = GITHUB_SECRET, **headers: str) -> httpx.Response:  # fmt: skip
    sent = {"Content-Type": "application/json", "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or str(uuid.uuid4()), **headers}  # fmt: skip
    if secret is not None:
        sent["X-Hub-Signature-256"] = sign(body, secret)
    return bot.http.post(f"{bot.url}/webhooks/github", content=body, headers=sent)


def native(bot: Bot, body: bytes, *, secret: str | None = DEPLOY_SECRET, token: str | None = None) -> httpx.Response:
    return post_native(bot.http, bot.url, body, secret=secret, token=token)


def post_native(http: httpx.Client, url: str, body: bytes, *, secret: str | None = DEPLOY_SECRET,
                token: str | None = None) -> httpx.Response:  # fmt: skip
    """`native` from a process that holds no `Bot`: a load generator of its own, say."""
    sent = {"Content-Type": "application/json"}
    if secret is not None:
        sent["X-Signature-256"] = sign(body, secret)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return http.post(f"{url}/webhooks/deploys", content=body, headers=sent)


def raw(value: object) -> bytes:
    return json.dumps(value).encode()


def suspects_until(bot: Bot, fake: FakeSlack, wanted: str, *, timeout: float = 20) -> str:
    """Ask /suspects payments until the answer shows `wanted` (the deploy reaches answers soon, not at once)."""
    deadline, asked, shown = time.monotonic() + timeout, 0, ""
    while time.monotonic() < deadline:
        asked += 1
        name = f"sus-{uuid.uuid4().hex[:8]}-{asked}"
        bot.command("/suspects", "payments 6h", fake.response_url(name))
        shown = text_of(only_response(fake, name))
        if wanted in shown:
            return shown
        time.sleep(0.2)
    raise AssertionError(f"{wanted} never shown by /suspects; last answer:\n{shown}")

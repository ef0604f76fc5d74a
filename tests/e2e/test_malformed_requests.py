"""Malformed and hostile requests against the real server over real HTTP: unsigned ones refused
(401) before parsing, signed garbage a 4xx or an ephemeral reply, never a 500 or a traceback, and
a well-formed request afterwards still answered."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from urllib.parse import urlencode

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.http import SLACK_MAX_BODY
from tests.e2e.conftest import Bot
from tests.fakes.slack_api import FakeSlack

FORM = "application/x-www-form-urlencoded"


def _still_answers(bot: Bot, fake_slack: FakeSlack, name: str) -> None:
    assert bot.command("/blast-radius", "redis", fake_slack.response_url(name)).status_code == 200
    fake_slack.wait_for(lambda: fake_slack.responses(name), timeout=20)
    assert "Traceback" not in bot.output()


def test_unsigned_garbage_is_refused_before_parsing_and_never_logged_whole(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    junk = b"{" * 500_000 + b"\xff"
    answer = bot.http.post(f"{bot.url}/slack/events", content=junk, headers={"Content-Type": "application/json"})
    assert answer.status_code == 401
    unsigned = bot.http.post(f"{bot.url}/slack/events", content=b"x" * 3_000_000, headers={"Content-Type": FORM})
    assert unsigned.status_code == 401  # read whole (a signed alert may be this large), then refused
    huge = bot.http.post(f"{bot.url}/slack/events", content=b"x" * (SLACK_MAX_BODY + 1), headers={"Content-Type": FORM})
    assert huge.status_code == 413
    # 64 MB, sent whole before the answer is read (http.client, as requests does): a 413, not a reset.
    for path in ("/slack/events", "/webhooks/deploys", "/nowhere"):
        assert post_whole(bot.url + path, b"x" * 64 * 1024 * 1024) == 413, path
    assert len(bot.output()) < 200_000 and "x" * 3000 not in bot.output()
    _still_answers(bot, fake_slack, "after-unsigned")


def post_whole(url: str, body: bytes) -> int:
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request("POST", "/" + url.split("/", 3)[3], body=body, headers={"Content-Type": FORM})
        return conn.getresponse().status
    finally:
        conn.close()


def test_signed_garbage_gets_a_4xx_and_a_command_without_response_url_a_polite_reply(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    envelope = {"type": "event_callback", "event_id": "Ev1", "team_id": "T1"}
    cases = {
        "not JSON": ("{not json", "application/json"),
        "deep JSON": ("[" * 100_000 + "]" * 100_000, "application/json"),
        "event a list": (json.dumps({**envelope, "event": [1, 2]}), "application/json"),
        "event a string": (json.dumps({**envelope, "event": "app_mention"}), "application/json"),
        "event text a number": (
            json.dumps({**envelope, "event": {"type": "app_mention", "text": 5}}),
            "application/json",
        ),  # fmt: skip
        "body a list": ("[]", "application/json"),
        "no actions": (urlencode({"payload": json.dumps({"type": "block_actions", "actions": []})}), FORM),
        "payload junk": (urlencode({"payload": "{{{"}), FORM),
        "not a form": ("&&==&", FORM),
    }
    for name, (body, kind) in cases.items():
        answer = bot.post(body, kind)
        assert 400 <= answer.status_code < 500, (name, answer.status_code, answer.text)
    utf8 = bot.http.post(f"{bot.url}/slack/events", content=b"\xff\xfe", headers=_signed(b"\xff\xfe", FORM))
    assert utf8.status_code == 400
    form = {"command": "/suspects", "text": "payments", "user_id": "U1", "channel_id": "C1", "team_id": "T1"}
    polite = bot.post(urlencode(form), FORM)
    assert polite.status_code == 200 and polite.json()["response_type"] == "ephemeral"
    assert "response_url" in polite.json()["text"]
    _still_answers(bot, fake_slack, "after-signed")


def _signed(body: bytes, content_type: str) -> dict[str, str]:
    import hashlib
    import hmac

    from tests.e2e.conftest import SECRET

    stamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"Content-Type": content_type, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


def test_suspects_windows_outside_the_range_are_named(bot_factory: Callable[..., Bot], fake_slack: FakeSlack) -> None:
    bot = bot_factory()
    for number, window in enumerate(("0h", "1e400h", "99999999999w", "-2h")):
        name = f"w{number}"
        bot.command("/suspects", f"payments {window}", fake_slack.response_url(name))
        fake_slack.wait_for(lambda name=name: fake_slack.responses(name), timeout=20)
        shown = json.dumps(fake_slack.responses(name))
        assert "1 minute to 1 year" in shown, (window, shown)
    assert "Traceback" not in bot.output()


_PIECES = st.one_of(
    st.binary(max_size=200),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
        max_leaves=12,
    ).map(lambda value: json.dumps(value).encode()),
    st.dictionaries(st.sampled_from(["command", "text", "payload", "user_id", "channel_id", "response_url",
                                     "ssl_check"]), st.text(max_size=30), max_size=6).map(
        lambda form: urlencode(form).encode()),
)  # fmt: skip


def test_fuzzed_signed_requests_never_get_a_500(bot_factory: Callable[..., Bot], fake_slack: FakeSlack) -> None:
    bot = bot_factory(
        PAGERDUTY_WEBHOOK_SECRETS="pd-secret", GITHUB_WEBHOOK_SECRETS="gh-secret",
        ONCALL_GRAPH_DEPLOY_WEBHOOK_TOKENS="deploy-token",
    )  # fmt: skip

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(body=_PIECES, kind=st.sampled_from(["application/json", FORM, "text/plain"]),
           path=st.sampled_from(["slack", "pagerduty", "github", "deploys", "/healthz", "/metrics"]))  # fmt: skip
    def probe(body: bytes, kind: str, path: str) -> None:
        answer = _send(bot, path, body, kind)
        assert answer.status_code < 500, (path, body[:200], answer.status_code, answer.text[:300])

    probe()
    assert "Traceback" not in bot.output()
    _still_answers(bot, fake_slack, "after-fuzz")


def _send(bot: Bot, path: str, body: bytes, kind: str) -> httpx.Response:
    import hashlib
    import hmac

    if path == "slack":
        return bot.http.post(f"{bot.url}/slack/events", content=body, headers=_signed(body, kind))
    if path == "pagerduty":
        return bot.pagerduty(body, "pd-secret")
    if path == "github":
        signature = "sha256=" + hmac.new(b"gh-secret", body, hashlib.sha256).hexdigest()
        headers = {"Content-Type": kind, "X-Hub-Signature-256": signature, "X-GitHub-Event": "deployment_status"}
        return bot.http.post(f"{bot.url}/webhooks/github", content=body, headers=headers)
    if path == "deploys":
        headers = {"Content-Type": kind, "Authorization": "Bearer deploy-token"}
        return bot.http.post(f"{bot.url}/webhooks/deploys", content=body, headers=headers)
    return bot.http.post(f"{bot.url}{path}", content=body, headers={"Content-Type": kind})


def test_metrics_on_their_own_port_leave_the_main_port(bot_factory: Callable[..., Bot]) -> None:
    import re

    bot = bot_factory(ONCALL_GRAPH_METRICS_PORT="0")
    found = re.search(r"metrics on (http://127\.0\.0\.1:\d+)/metrics", bot.output())
    assert found, bot.output()
    assert "oncall_graph_" in httpx.get(f"{found.group(1)}/metrics", timeout=10).text
    assert httpx.get(f"{bot.url}/metrics", timeout=10).status_code == 404
    assert httpx.get(f"{found.group(1)}/slack/events", timeout=10).status_code == 404

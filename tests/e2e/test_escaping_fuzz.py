"""Slack's control sequences in every source field, through the running bot over signed HTTP: slash
commands, a mention, an alert thread reply, a PagerDuty webhook post and deploys pushed to the deploy
webhook (every field hostile, its service too, then `/suspects` on it). Whatever the fake Slack
receives parses as Block Kit, carries no raw control sequence, and links only what the bot built."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block

from tests.bot.slack.test_blocks import texts
from tests.bot.slack.test_escaping import assert_no_raw_control
from tests.e2e.conftest import Bot
from tests.e2e.test_alert_redaction import alert_card
from tests.e2e.test_pagerduty_webhook import PD_SECRET, incident_event, raw
from tests.e2e.test_slack_bot import only_response
from tests.e2e.webhook_posts import DEPLOY_SECRET, native, recent
from tests.fakes.slack_api import FakeSlack

CONTROL = ["<!channel>", "<!here>", "<!everyone>", "<@U024BE7LH>", "<#C024BE7LH>", "<!subteam^S0614TZR7>",
           "<https://evil.example/phish|CI run>", "https://ok.example/a|b", "&", "&lt;!here&gt;", "*bold*", "_it_",
           "~gone~", "`code`", "```", "\u200b", "\u200d", "\ufeff", "\u202e", "\u2066", "<", ">", "|",
           "https://ci.example.com/r-9999", "ci.example.com"]  # fmt: skip
HOSTILE = st.lists(st.sampled_from(CONTROL) | st.text("ab -.", max_size=4), min_size=1, max_size=4).map("".join)
URLS = st.sampled_from(["https://evil.example/phish|CI run", "https://ci.example.com/r?a=1&b=<2>",
                        "javascript:alert(1)", "https://ok.example/a|b", "<https://evil.example|x>"])  # fmt: skip
RECORD = st.fixed_dictionaries({"title": HOSTILE, "description": HOSTILE, "alias": HOSTILE, "runbook": HOSTILE,
                                "version": HOSTILE, "actor": HOSTILE, "id": HOSTILE, "url": URLS,
                                "alert": HOSTILE, "service": HOSTILE})  # fmt: skip
_runs = itertools.count()


def write(folder: Path, records: list[dict[str, str]]) -> dict[str, str]:
    (folder / "catalog").mkdir(parents=True)
    (folder / "runbooks").mkdir()
    q, docs, feed = json.dumps, [], []
    recent = (datetime.now(UTC) - timedelta(minutes=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for i, r in enumerate(records):
        docs.append(
            "apiVersion: backstage.io/v1alpha1\nkind: Component\n"
            f"metadata: {{name: svc{i}, title: {q(r['title'])}, description: {q(r['description'])},"
            f" annotations: {{oncall-graph/aliases: {q(r['alias'] + ', alias' + str(i))}}}}}\n"
            f"spec: {{type: service, owner: group:team, dependsOn: [resource:db{i}]}}\n"
            f"---\napiVersion: backstage.io/v1alpha1\nkind: Resource\nmetadata: {{name: db{i}}}\n"
            "spec: {type: database, owner: group:team}\n"
        )
        (folder / "runbooks" / f"svc{i}.md").write_text(
            f"# svc{i} {r['runbook']}\n\nsvc{i} depends on db{i}. {r['runbook']}\n"
        )
        feed.append(json.dumps({"id": r["id"], "service": f"db{i}", "version": r["version"], "actor": r["actor"],
                                "url": r["url"], "deployed_at": recent}))  # fmt: skip
    docs.append("apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata: {name: team}\nspec: {type: team}\n")
    (folder / "catalog" / "hostile.yaml").write_text("---\n".join(docs))
    (folder / "deploys.jsonl").write_text("\n".join(feed) + "\n")
    return {"ONCALL_GRAPH_CATALOG": str(folder / "catalog"), "ONCALL_GRAPH_DEPLOYS": str(folder / "deploys.jsonl"),
            "ONCALL_GRAPH_DOCS": str(folder / "runbooks")}  # fmt: skip


def received(fake: FakeSlack) -> list[dict[str, Any]]:
    return [*fake.posted("chat.postMessage"), *fake.responses()]


def check(message: dict[str, Any], urls: set[str]) -> None:
    for block in message.get("blocks") or []:
        parsed = Block.parse(block)
        assert parsed is not None, block
        parsed.validate_json()
    mrkdwn = [message.get("text") or ""] + [
        t for b in message.get("blocks") or [] for t in texts(b) if b.get("type") not in ("header", "actions")
    ]
    for piece in mrkdwn:
        assert_no_raw_control(piece, urls)
        assert "\u202e" not in piece and "\u2066" not in piece


def push_deploys(bot: Bot, fake: FakeSlack, run: int, i: int, r: dict[str, str]) -> None:
    """POST two hostile deploys, signed, to /webhooks/deploys: one on svc{i}, one on a hostile service
    name; ask /suspects until the first shows (its version carries a plain marker), then the second."""
    marker = f"pushed{run}x{i}"
    hostile = {"id": f"{marker}-{r['id']}", "version": f"{marker} {r['version']}", "actor": r["actor"],
               "url": r["url"], "deployed_at": recent(10)}  # fmt: skip
    events = [
        {**hostile, "service": f"svc{i}"},
        {**hostile, "id": f"u{marker}-{r['id']}", "service": f"{r['service']}-x"},
    ]
    answer = native(bot, json.dumps(events).encode(), secret=DEPLOY_SECRET)
    assert answer.status_code == 202, answer.text
    deadline = time.monotonic() + 30  # a pushed deploy reaches answers at the next snapshot, not at once
    for attempt in itertools.count():
        name = f"wh{run}-{i}-{attempt}"
        bot.command("/suspects", f"svc{i} 6h", fake.response_url(name))
        if marker in json.dumps(only_response(fake, name)):
            break
        assert time.monotonic() < deadline, f"the pushed deploy {marker} never reached /suspects"
        time.sleep(0.3)
    bot.command("/suspects", f"{r['service']}-x 6h", fake.response_url(f"wh{run}-{i}-unknown"))
    only_response(fake, f"wh{run}-{i}-unknown")


def test_control_sequences_in_every_source_field_never_reach_slack_raw(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    @settings(max_examples=2, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(records=st.lists(RECORD, min_size=3, max_size=3))
    def probe(records: list[dict[str, str]]) -> None:
        run = next(_runs)
        sources = write(tmp_path / f"run{run}", records)
        bot = bot_factory(f"run{run}", sources=sources, PAGERDUTY_WEBHOOK_SECRETS=PD_SECRET,
                          ONCALL_GRAPH_ALERT_CHANNEL=f"CPD{run}",
                          ONCALL_GRAPH_DEPLOY_WEBHOOK_SECRETS=DEPLOY_SECRET)  # fmt: skip
        before, expected = len(received(fake_slack)), 0
        for i, r in enumerate(records):
            for command, text in (("/blast-radius", f"db{i}"), ("/suspects", f"db{i} 6h"),
                                  ("/blast-radius", r["alias"]), ("/suspects", r["title"])):  # fmt: skip
                bot.command(command, text, fake_slack.response_url(f"r{run}-{i}-{expected}"))
                expected += 1
            ts = f"17000{run:02d}{i:03d}.000100"
            asked = f"<@UBOT> what breaks if db{i} fails? {r['alert']}"
            bot.event({"type": "app_mention", "user": "UUSER", "channel": "COPS", "ts": ts, "event_ts": ts,
                       "text": asked}, event_id=f"EvM{run}{i}")  # fmt: skip
            card = alert_card(f"1700100000.{run:02d}{i:02d}{run % 10}{i}", r["alert"], f"db{i}")  # incident Q..X unique
            bot.event(card, event_id=f"EvA{run}{i}")
            body = raw(incident_event(f"Q{run}X{i}", f"P{run}{i}", r["title"], title=r["alert"]))
            body = body.replace(b"https://acme.pagerduty.com/incidents/", r["url"].encode() + b"/")
            assert bot.pagerduty(body, PD_SECRET).status_code == 202
            expected += 3
        fake_slack.wait_for(lambda: len(received(fake_slack)) - before >= expected, timeout=60)
        for i, r in enumerate(records):
            push_deploys(bot, fake_slack, run, i, r)
        urls = {r["url"] for r in records} | {r["url"] + f"/Q{run}X{i}" for i, r in enumerate(records)}
        for message in received(fake_slack)[before:]:
            check(message, urls)
        for shared in fake_slack.uploads():  # the full answers' and pictures' titles: plain words
            assert not {"<", ">", "\u202e", "\u2066"} & set(shared["title"] or ""), shared["title"]
        assert "Traceback" not in bot.output()

    probe()

"""Slack's newer surfaces through the running bot (`oncall-graph serve`, signed requests over HTTP, the
fake Slack API recording every call): the assistant pane's prompts and answers, a pasted Backstage
link's unfurl, App Home, and the "Blast radius" message shortcut. Every block posted is read back
through slack_sdk's Block Kit models."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from tests.e2e.conftest import ADMIN, ALERTS, Bot, new_trigger, write_sources
from tests.e2e.test_slack_bot import pagerduty_alert, text_of
from tests.fakes.slack_api import FakeSlack

Json = dict[str, Any]
BACKSTAGE = "https://backstage.example.com"
DM = "D0ASSIST"
DEPLOY_LINK = "<https://ci.example.com/r-8812|r-8812>"
# People whose catalog users carry their Slack ids (Backstage's `slack.com/bot-notify`).
PEOPLE = """
---
apiVersion: backstage.io/v1alpha1
kind: User
metadata: {name: dana, annotations: {slack.com/bot-notify: UDANA}}
spec: {memberOf: [risk-team]}
---
apiVersion: backstage.io/v1alpha1
kind: User
metadata: {name: root, annotations: {slack.com/bot-notify: UADMIN}}
spec: {memberOf: [secops]}
"""


def valid(blocks: list[Json]) -> None:
    for block in blocks:
        parsed = Block.parse(block)
        assert parsed is not None, block
        parsed.validate_json()


def start(bot_factory: Callable[..., Bot], tmp_path: Path) -> Bot:
    sources = write_sources(tmp_path / "sources", extra_catalog=PEOPLE)
    return bot_factory(sources=sources, ONCALL_GRAPH_BACKSTAGE_URL=BACKSTAGE)


def thread_started(
    bot: Bot, thread_ts: str, came_from: str, *, event_id: str, kind: str = "assistant_thread_started"
) -> httpx.Response:
    thread = {"user_id": "UUSER", "channel_id": DM, "thread_ts": thread_ts,
              "context": {"channel_id": came_from, "team_id": "T1"}}  # fmt: skip
    return bot.event({"type": kind, "assistant_thread": thread}, event_id=event_id)


def shortcut(bot: Bot, message: Json, response_url: str, *, channel: str = ALERTS) -> httpx.Response:
    payload = {
        "type": "message_action", "callback_id": "blast_radius_message", "trigger_id": new_trigger(),
        "team": {"id": "T1"}, "user": {"id": "UUSER"}, "channel": {"id": channel}, "message": message,
        "message_ts": message["ts"], "response_url": response_url, "api_app_id": "AOG",
    }  # fmt: skip
    return bot.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")


def test_an_assistant_thread_suggests_prompts_from_the_alert_channel_and_answers_in_its_thread(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot = start(bot_factory, tmp_path)
    alert = pagerduty_alert(f"{time.time() - 600:.6f}")
    fake_slack.history[ALERTS] = [alert]
    assert thread_started(bot, "1800000000.000100", ALERTS, event_id="EvT1").status_code == 200
    fake_slack.wait_for(lambda: fake_slack.posted("assistant.threads.setSuggestedPrompts"), timeout=20)
    [prompted] = fake_slack.posted("assistant.threads.setSuggestedPrompts")
    assert prompted["channel_id"] == DM and prompted["thread_ts"] == "1800000000.000100"
    messages = [p["message"] for p in prompted["prompts"]]
    assert messages[:2] == ["What breaks if payments goes down?", "What changed around payments in the last 6 h?"]

    # From a channel with no alert: the most depended-on entities the person may see, and recent deploys.
    thread_started(bot, "1800000000.000200", "COPS", event_id="EvT2")
    fake_slack.wait_for(lambda: len(fake_slack.posted("assistant.threads.setSuggestedPrompts")) == 2, timeout=20)
    elsewhere = fake_slack.posted("assistant.threads.setSuggestedPrompts")[1]
    asked = [p["message"] for p in elsewhere["prompts"]]
    assert asked[-1] == "What was deployed in the last hour?" and len(asked) <= 4
    assert any(a.startswith("What breaks if ") for a in asked)
    assert all("vault-proxy" not in a for a in asked)
    # The person moves beside the alert channel, whose alert is resolved by now: the graph's prompts again.
    fake_slack.history[ALERTS] = [pagerduty_alert(f"{time.time() - 60:.6f}", status="Resolved"), alert]
    thread_started(bot, "1800000000.000200", ALERTS, event_id="EvT3", kind="assistant_thread_context_changed")
    fake_slack.wait_for(lambda: len(fake_slack.posted("assistant.threads.setSuggestedPrompts")) == 3, timeout=20)
    moved = fake_slack.posted("assistant.threads.setSuggestedPrompts")[2]
    assert moved["thread_ts"] == "1800000000.000200" and moved["prompts"] == elsewhere["prompts"]

    question = {"type": "message", "channel": DM, "channel_type": "im", "user": "UUSER",
                "text": "what breaks if redis goes down?", "ts": "1800000000.000300",
                "thread_ts": "1800000000.000100"}  # fmt: skip
    assert bot.event(question, event_id="EvQ1").status_code == 200
    fake_slack.wait_for(lambda: fake_slack.posted("assistant.threads.setTitle"), timeout=20)
    bot.event(question, event_id="EvQ1", **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    time.sleep(1)
    [answer] = [m for m in fake_slack.posted("chat.postMessage") if m["channel"] == DM]
    assert answer["thread_ts"] == "1800000000.000100"
    valid(answer["blocks"])
    shown = text_of(answer)
    assert "secrets-ui" in shown and "vault-proxy" not in shown  # the asking person's visibility
    [status] = fake_slack.posted("assistant.threads.setStatus")
    assert status["status"] == "walking the graph…" and status["thread_ts"] == "1800000000.000100"
    [title] = fake_slack.posted("assistant.threads.setTitle")
    assert title["title"] == "redis" and title["channel_id"] == DM
    calls = fake_slack.calls()
    assert calls.index("assistant.threads.setStatus") < calls.index("chat.postMessage")


def test_a_backstage_link_unfurls_as_the_channel_may_see_it_never_the_poster(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot = start(bot_factory, tmp_path)
    antifraud = f"{BACKSTAGE}/catalog/default/component/antifraud"
    hidden = f"{BACKSTAGE}/catalog/default/component/vault-proxy/dependencies"
    elsewhere = "https://example.org/catalog/default/component/antifraud"

    def shared(channel: str, ts: str, *urls: str) -> Json:
        links = [{"url": url, "domain": "backstage.example.com"} for url in urls]
        # The poster (UADMIN) could see vault-proxy nowhere either; the channel decides.
        return {"type": "link_shared", "channel": channel, "user": ADMIN, "message_ts": ts, "links": links}

    assert bot.event(shared("COPS", "1800000001.000100", hidden), event_id="EvL1").status_code == 200
    bot.event(shared("COPS", "1800000001.000200", antifraud, hidden, elsewhere), event_id="EvL2")
    fake_slack.wait_for(lambda: fake_slack.posted("chat.unfurl"), timeout=20)
    time.sleep(1)
    [unfurl] = fake_slack.posted("chat.unfurl")
    assert unfurl["channel"] == "COPS" and unfurl["ts"] == "1800000001.000200"
    assert list(unfurl["unfurls"]) == [antifraud]
    blocks = unfurl["unfurls"][antifraud]["blocks"]
    valid(blocks)
    line = text_of({"blocks": blocks})
    assert "*antifraud* (component) · if it goes down: " in line and "payments" in line
    assert "owners: risk-team" in line and f"last deploy: {DEPLOY_LINK} (ci.example.com) v2.3.1" in line
    assert "vault" not in json.dumps(unfurl)

    bot.event(shared("CSECURITY", "1800000001.000300", hidden), event_id="EvL3")
    fake_slack.wait_for(lambda: len(fake_slack.posted("chat.unfurl")) == 2, timeout=20)
    allowed = fake_slack.posted("chat.unfurl")[1]
    assert list(allowed["unfurls"]) == [hidden]
    assert "*vault-proxy* (component)" in text_of({"blocks": allowed["unfurls"][hidden]["blocks"]})
    assert "owners: secops" in text_of({"blocks": allowed["unfurls"][hidden]["blocks"]})


def test_app_home_shows_what_the_persons_teams_own_and_admins_the_sources(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot = start(bot_factory, tmp_path)
    for number, user in enumerate(("UDANA", ADMIN, "UNOBODY")):
        event = {"type": "app_home_opened", "user": user, "channel": f"D{user}", "tab": "home"}
        assert bot.event(event, event_id=f"EvH{number}").status_code == 200
    bot.event({"type": "app_home_opened", "user": "UDANA", "channel": "DUDANA", "tab": "messages"}, event_id="EvH9")
    fake_slack.wait_for(lambda: len(fake_slack.posted("views.publish")) == 3, timeout=20)
    time.sleep(1)
    views = {p["user_id"]: p["view"] for p in fake_slack.posted("views.publish")}
    assert set(views) == {"UDANA", ADMIN, "UNOBODY"}
    for view in views.values():
        View(**view).validate_json()
        valid(view["blocks"])
    dana = text_of(views["UDANA"])
    assert "*Owned by dana, risk-team* (2 entities)" in dana and "*antifraud* (component)" in dana
    assert f"last deploy: {DEPLOY_LINK}" in dana and "graph " in dana and "Graph lag" not in dana
    admin = text_of(views[ADMIN])
    # secops owns only vault-proxy, which no channel or user the home tab has may see: not even counted.
    assert "own nothing in the graph you may see" in admin and "vault-proxy" not in admin
    assert "Graph lag" in admin and "Coverage" in admin and "catalog" in admin
    assert "does not know your teams" in text_of(views["UNOBODY"])


def test_the_blast_radius_shortcut_on_an_alert_answers_in_its_thread(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot = start(bot_factory, tmp_path)
    alert = pagerduty_alert("1800000002.000100")
    assert shortcut(bot, alert, fake_slack.response_url("s1")).status_code == 200
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=20)
    [reply] = fake_slack.posted("chat.postMessage")
    assert reply["channel"] == ALERTS and reply["thread_ts"] == "1800000002.000100"
    valid(reply["blocks"])
    assert "If payments goes down" in text_of(reply)

    chatter = {"type": "message", "ts": "1800000002.000200", "user": "UX", "text": "lunch anyone?"}
    shortcut(bot, chatter, fake_slack.response_url("s2"), channel="COPS")
    fake_slack.wait_for(lambda: fake_slack.responses("s2"), timeout=20)
    [told] = fake_slack.responses("s2")
    assert told["response_type"] == "ephemeral" and "found no entity" in text_of(told)
    valid(told["blocks"])
    assert len(fake_slack.posted("chat.postMessage")) == 1


def test_malformed_surface_payloads_get_a_400_naming_the_field_never_a_500(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    bot = start(bot_factory, tmp_path)
    broken = {
        "body.event.assistant_thread": {"type": "assistant_thread_started", "assistant_thread": "D1"},
        "body.event.assistant_thread.thread_ts": {"type": "assistant_thread_started",
                                                  "assistant_thread": {"channel_id": DM}},
        "body.event.assistant_thread.context": {"type": "assistant_thread_context_changed",
                                                "assistant_thread": {"channel_id": DM, "thread_ts": "1.2",
                                                                     "context": ["C1"]}},
        "body.event.links": {"type": "link_shared", "channel": "COPS", "message_ts": "1.2", "links": "x"},
        "body.event.links[0].url": {"type": "link_shared", "channel": "COPS", "message_ts": "1.2",
                                    "links": [{"url": 7}]},
        "body.event.tab": {"type": "app_home_opened", "user": "UDANA", "tab": ["home"]},
    }  # fmt: skip
    for number, (field, event) in enumerate(broken.items()):
        answer = bot.event(event, event_id=f"EvBad{number}")
        assert answer.status_code == 400 and field in answer.json()["error"], (field, answer.text)
    payload = {"type": "message_action", "callback_id": "blast_radius_message", "user": {"id": "UUSER"},
               "channel": {"id": "COPS"}, "message": "hello", "trigger_id": new_trigger()}  # fmt: skip
    answer = bot.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    assert answer.status_code == 400 and "payload.message" in answer.json()["error"]
    # Well-formed but odd: a link_shared with no links of ours, a shortcut with no response_url, a DM
    # message outside any thread: acked, nothing posted, nothing raised.
    odd = {"type": "link_shared", "channel": "COPS", "message_ts": "1.2", "links": [{"url": "mailto:x@y"}]}
    assert bot.event(odd, event_id="EvOdd1").status_code == 200
    plain_dm = {"type": "message", "channel": DM, "channel_type": "im", "user": "UUSER", "text": "hi", "ts": "1.3"}
    assert bot.event(plain_dm, event_id="EvOdd2").status_code == 200
    payload["message"] = {"ts": "1.4", "text": "redis"}  # and no response_url
    assert bot.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded").status_code == 200
    fake_slack.wait_for(lambda: fake_slack.posted("chat.postMessage"), timeout=20)
    time.sleep(0.5)
    assert "Traceback" not in bot.output()
    assert not fake_slack.posted("chat.unfurl") and len(fake_slack.posted("chat.postMessage")) == 1

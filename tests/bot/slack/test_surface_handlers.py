"""The newer surfaces' handlers with recording doubles: answered once per click or event, a failed
status never failing the answer, a thread the bot cannot post in told to the clicker, nothing
unfurled or published that should not be."""

from __future__ import annotations

from typing import Any

from bot.slack import assistant, home, shortcuts, unfurls
from bot.slack.claims import Claims
from tests.bot.slack.slack_doubles import MemoryClaims, RecordingAck, RecordingClient, RecordingRespond
from tests.bot.slack.test_handlers import ADMIN, QUICK, make_deps, shown, valid_blocks

Json = dict[str, Any]
BASE = "https://backstage.example.com"


def message_action(text: str, *, trigger: str = "7.8.9") -> Json:
    return {
        "type": "message_action",
        "callback_id": shortcuts.CALLBACK_ID,
        "trigger_id": trigger,
        "user": {"id": "UUSER"},
        "channel": {"id": "COPS"},
        "message": {"ts": "1700000000.000100", "text": text},
    }


def test_the_shortcut_answers_each_named_entity_in_the_thread_once_per_click() -> None:
    deps, client, respond = make_deps(), RecordingClient(), RecordingRespond()
    for _ in range(2):  # a replayed click: acked, not answered again
        ack = RecordingAck()
        shortcuts.on_blast_shortcut(ack, message_action("is redis or payments down?"), respond, client, deps)
        assert len(ack.calls) == 1
    replies = client.posted()
    assert [r["thread_ts"] for r in replies] == ["1700000000.000100"] * 2 and respond.sent == []
    assert "If redis goes down" in shown(replies[0]) and "If payments goes down" in shown(replies[1])
    for reply in replies:
        valid_blocks(reply)


def test_a_thread_the_bot_cannot_post_in_is_told_to_the_clicker_and_left_to_a_retry() -> None:
    memory = MemoryClaims()
    deps, client, respond = (
        make_deps(claims=Claims(memory.take, memory.settle), poster=QUICK),
        RecordingClient(),
        RecordingRespond(),
    )
    client.fail_next("chat_postMessage", {"ok": False, "error": "not_in_channel"})
    shortcuts.on_blast_shortcut(RecordingAck(), message_action("redis"), respond, client, deps)
    [told] = respond.sent
    assert told["response_type"] == "ephemeral" and "not_in_channel" in shown(told) and "Invite" in shown(told)
    assert memory.states["shortcut:7.8.9"] == "failed"


def test_a_status_slack_refuses_never_keeps_the_assistants_answer_back() -> None:
    deps, client = make_deps(poster=QUICK), RecordingClient()
    client.fail_next("assistant_threads_setStatus", {"ok": False, "error": "missing_scope"})
    event = {
        "type": "message",
        "channel": "D1",
        "channel_type": "im",
        "user": "UUSER",
        "text": "what breaks if redis goes down?",
        "ts": "2.1",
        "thread_ts": "2.0",
    }
    assistant.on_user_message({"event_id": "EvA"}, event, client, deps)
    assistant.on_user_message({"event_id": "EvA"}, event, client, deps)  # Slack's retry
    [answer] = client.posted()
    assert answer["thread_ts"] == "2.0" and "checkout" in shown(answer)
    assert [t["title"] for t in client.posted("assistant_threads_setTitle")] == ["redis"]


def test_prompts_from_a_channel_that_is_not_watched_never_read_its_history() -> None:
    deps, client = make_deps(), RecordingClient()
    event = {
        "type": "assistant_thread_started",
        "assistant_thread": {"user_id": "U1", "channel_id": "D1", "thread_ts": "3.0", "context": {"channel_id": "CX"}},
    }
    assistant.on_thread_started({"event_id": "EvS"}, event, client, deps)
    assert client.posted("conversations_history") == []
    [prompted] = client.posted("assistant_threads_setSuggestedPrompts")
    assert prompted["prompts"][-1]["message"] == "What was deployed in the last hour?"


def test_an_unfurl_needs_a_graph_and_a_link_of_ours_and_is_sent_once() -> None:
    client = RecordingClient()
    page = f"{BASE}/catalog/default/component/payments"
    event = {"type": "link_shared", "channel": "COPS", "message_ts": "4.0", "links": [{"url": page}]}
    unfurls.on_link_shared({"event_id": "EvU0"}, event, client, make_deps(snapshot=lambda: None, backstage_url=BASE))
    unfurls.on_link_shared({"event_id": "EvU1"}, event, client, make_deps())  # no ONCALL_GRAPH_BACKSTAGE_URL
    assert client.posted("chat_unfurl") == []
    deps = make_deps(backstage_url=BASE)
    unfurls.on_link_shared({"event_id": "EvU2"}, event, client, deps)
    unfurls.on_link_shared({"event_id": "EvU2"}, event, client, deps)
    [sent] = client.posted("chat_unfurl")
    assert (sent["channel"], sent["ts"]) == ("COPS", "4.0") and list(sent["unfurls"]) == [page]
    composer = {
        "type": "link_shared",
        "channel": "COMPOSER",
        "message_ts": "x",
        "unfurl_id": "U9",
        "source": "composer",
        "links": [{"url": page}],
    }
    unfurls.on_link_shared({"event_id": "EvU3"}, composer, client, deps)
    assert client.posted("chat_unfurl")[1]["unfurl_id"] == "U9"


def test_home_is_published_for_the_home_tab_and_admins_see_the_sources() -> None:
    deps, client = make_deps(), RecordingClient()
    home.on_home_opened(
        {"event_id": "EvH0"}, {"type": "app_home_opened", "user": "U1", "tab": "messages"}, client, deps
    )
    assert client.posted("views_publish") == []
    home.on_home_opened({"event_id": "EvH1"}, {"type": "app_home_opened", "user": "U1", "tab": "home"}, client, deps)
    home.on_home_opened({"event_id": "EvH2"}, {"type": "app_home_opened", "user": ADMIN, "tab": "home"}, client, deps)
    person, admin = client.posted("views_publish")
    assert person["user_id"] == "U1" and "Graph lag" not in shown(person["view"])
    assert admin["user_id"] == ADMIN and "Graph lag" in shown(admin["view"])
    valid_blocks(admin["view"])

"""The fake Slack Web API answers slack_sdk's real clients the way Slack does, and records what they sent."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_bolt import App, BoltRequest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.webhook import WebhookClient

from tests.fakes.slack_api import BOT_ID, BOT_USER, FakeSlack, slack_api

BLOCKS = [{"type": "section", "text": {"type": "mrkdwn", "text": "*redis* is down"}}]


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with slack_api() as running:
        yield running


@pytest.fixture
def client(fake: FakeSlack) -> WebClient:
    return WebClient(token="xoxb-test", base_url=fake.url)


def test_base_url_ends_in_slash_under_api_like_slack(fake: FakeSlack) -> None:
    assert fake.url.startswith("http://127.0.0.1:")
    assert fake.url.endswith("/api/")


def test_auth_test_names_the_bot_user_and_bot_id(client: WebClient, fake: FakeSlack) -> None:
    reply = client.auth_test()

    assert (reply["user_id"], reply["bot_id"]) == (BOT_USER, BOT_ID)
    assert fake.calls() == ["auth.test"]


def test_post_message_records_json_body_and_bearer_token(client: WebClient, fake: FakeSlack) -> None:
    client.chat_postMessage(channel="C1", text="redis is down", blocks=BLOCKS, thread_ts="1.000100")

    [body] = fake.posted("chat.postMessage")
    assert body == {"channel": "C1", "text": "redis is down", "blocks": BLOCKS, "thread_ts": "1.000100"}
    [request] = fake.requests
    assert request.headers["authorization"] == "Bearer xoxb-test"


def test_form_encoded_blocks_are_parsed_from_their_json_string(client: WebClient, fake: FakeSlack) -> None:
    client.api_call("chat.postMessage", params={"channel": "C1", "text": "t", "blocks": json.dumps(BLOCKS)})

    assert fake.posted("chat.postMessage")[0]["blocks"] == BLOCKS


def test_each_new_message_gets_a_unique_increasing_ts(client: WebClient) -> None:
    stamps = [client.chat_postMessage(channel="C1", text=str(n))["ts"] for n in range(3)]

    assert stamps == sorted(stamps, key=float)
    assert len(set(stamps)) == 3


def test_reply_carries_channel_ts_and_the_message(client: WebClient) -> None:
    reply = client.chat_postMessage(channel="C1", text="hi", thread_ts="1.000100")

    assert reply["channel"] == "C1"
    assert reply["message"]["ts"] == reply["ts"]
    assert reply["message"]["thread_ts"] == "1.000100"
    assert reply["message"]["bot_id"] == BOT_ID


def test_update_keeps_the_ts_of_the_message_it_edits(client: WebClient, fake: FakeSlack) -> None:
    ts = client.chat_postMessage(channel="C1", text="working…")["ts"]

    reply = client.chat_update(channel="C1", ts=ts, text="done")

    assert reply["ts"] == ts
    assert fake.posted("chat.update") == [{"channel": "C1", "ts": ts, "text": "done"}]


def test_ephemeral_message_is_recorded_with_its_user(client: WebClient, fake: FakeSlack) -> None:
    reply = client.chat_postEphemeral(channel="C1", user="U1", text="only you")

    assert reply["message_ts"]
    assert fake.posted("chat.postEphemeral") == [{"channel": "C1", "user": "U1", "text": "only you"}]


def test_message_without_channel_or_text_is_refused_like_slack(client: WebClient, fake: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as no_channel:
        client.chat_postMessage(channel="", text="x")
    with pytest.raises(SlackApiError) as no_text:
        client.api_call("chat.postMessage", json={"channel": "C1", "text": ""})

    assert (no_channel.value.response["error"], no_text.value.response["error"]) == ("channel_not_found", "no_text")
    assert fake.posted("chat.postMessage") == []
    assert fake.calls() == ["chat.postMessage", "chat.postMessage"]


def test_files_upload_v2_steps_are_joined_into_one_upload(client: WebClient, fake: FakeSlack) -> None:
    client.files_upload_v2(
        channel="C1", thread_ts="1.000100", content="a,b\n", filename="radius.csv", title="Blast radius"
    )

    [upload] = fake.uploads()
    assert upload["file_id"].startswith("F")
    assert (upload["filename"], upload["title"], upload["content"]) == ("radius.csv", "Blast radius", "a,b\n")
    assert upload["data"] == b"a,b\n"
    assert (upload["channel"], upload["thread_ts"], upload["completed"]) == ("C1", "1.000100", True)
    assert fake.calls()[1] == f"upload/{upload['file_id']}"


def test_binary_file_upload_keeps_its_bytes(client: WebClient, fake: FakeSlack) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"
    client.files_upload_v2(channel="C1", thread_ts="1.000200", file=png, filename="radius.png", title="Radius")

    [upload] = fake.uploads()
    assert (upload["filename"], upload["data"], upload["thread_ts"]) == ("radius.png", png, "1.000200")


def test_upload_never_completed_is_listed_only_as_pending(client: WebClient, fake: FakeSlack) -> None:
    client.files_getUploadURLExternal(filename="graph.png", length=3)

    assert fake.uploads() == []
    assert [(u["filename"], u["completed"]) for u in fake.uploads(pending=True)] == [("graph.png", False)]


def test_retired_files_upload_method_fails_like_slack(client: WebClient) -> None:
    with pytest.raises(SlackApiError) as error:
        client.api_call("files.upload", params={"channels": "C1", "content": "x"})

    assert error.value.response["error"] == "method_deprecated"


def test_response_url_posts_are_recorded_per_name(fake: FakeSlack) -> None:
    reply = WebhookClient(fake.response_url("cmd-1")).send(text="3 impacted", response_type="in_channel")
    WebhookClient(fake.response_url("cmd-2")).send(text="other")

    assert (reply.status_code, reply.body) == (200, "ok")
    assert fake.responses("cmd-1") == [{"text": "3 impacted", "response_type": "in_channel"}]
    assert len(fake.responses()) == 2


def test_conversations_and_users_info_answer_minimal_objects(client: WebClient) -> None:
    channel = client.conversations_info(channel="G1")["channel"]
    user = client.users_info(user="U1")["user"]

    assert (channel["id"], channel["is_private"]) == ("G1", True)
    assert (user["id"], user["is_bot"]) == ("U1", False)


def test_opening_a_direct_message_answers_a_dm_channel_id(client: WebClient) -> None:
    assert client.conversations_open(users="U1")["channel"]["id"] == "DU1"


def test_unknown_methods_answer_ok(client: WebClient, fake: FakeSlack) -> None:
    assert client.reactions_add(channel="C1", timestamp="1.000100", name="eyes")["ok"] is True
    assert fake.posted("reactions.add") == [{"channel": "C1", "timestamp": "1.000100", "name": "eyes"}]


@pytest.mark.parametrize("token", ["xoxp-user-token", "not-a-token"])
def test_token_without_bot_prefix_gets_invalid_auth(fake: FakeSlack, token: str) -> None:
    with pytest.raises(SlackApiError) as error:
        WebClient(token=token, base_url=fake.url).chat_postMessage(channel="C1", text="x")

    assert error.value.response["error"] == "invalid_auth"
    assert fake.posted("chat.postMessage") == []


def test_missing_token_gets_invalid_auth(fake: FakeSlack) -> None:
    with pytest.raises(SlackApiError):
        WebClient(base_url=fake.url).auth_test()


def test_token_check_can_be_switched_off() -> None:
    with slack_api(require_token=False) as fake:
        assert WebClient(base_url=fake.url).auth_test()["ok"] is True


def test_fail_next_answers_429_with_retry_after_once(client: WebClient, fake: FakeSlack) -> None:
    fake.fail_next("chat.postMessage", status=429, retry_after=7)

    with pytest.raises(SlackApiError) as error:
        client.chat_postMessage(channel="C1", text="first")
    client.chat_postMessage(channel="C1", text="second")

    assert error.value.response.status_code == 429
    assert error.value.response.headers["Retry-After"] == "7"
    assert [b["text"] for b in fake.posted("chat.postMessage")] == ["second"]


def test_rate_limit_retry_handler_resends_after_429(fake: FakeSlack) -> None:
    client = WebClient(token="xoxb-test", base_url=fake.url, retry_handlers=[RateLimitErrorRetryHandler()])
    fake.fail_next("chat.postMessage", retry_after=0)

    client.chat_postMessage(channel="C1", text="alert")

    assert fake.calls() == ["chat.postMessage", "chat.postMessage"]
    assert [b["text"] for b in fake.posted("chat.postMessage")] == ["alert"]


def test_fail_next_can_fail_a_response_url(fake: FakeSlack) -> None:
    fake.fail_next("response/cmd", status=500, retry_after=None)

    assert WebhookClient(fake.response_url("cmd")).send(text="x").status_code == 500
    assert fake.responses("cmd") == []


def test_wait_for_returns_once_another_thread_posts(client: WebClient, fake: FakeSlack) -> None:
    poster = threading.Thread(target=lambda: client.chat_postMessage(channel="C1", text="late"))
    poster.start()

    fake.wait_for(lambda: fake.posted("chat.postMessage"))

    poster.join()
    assert fake.posted("chat.postMessage")[0]["text"] == "late"


def test_wait_for_names_the_calls_so_far_when_it_times_out(client: WebClient, fake: FakeSlack) -> None:
    client.auth_test()

    with pytest.raises(AssertionError, match=r"auth\.test"):
        fake.wait_for(lambda: fake.posted("chat.postMessage"), timeout=0.05)


def test_a_bolt_app_runs_against_the_fake_end_to_end(client: WebClient, fake: FakeSlack) -> None:
    app = App(client=client, signing_secret="secret", process_before_response=True)

    @app.command("/graph-lag")
    def on_lag(ack: Any, respond: Any, say: Any) -> None:
        ack()
        respond(text="catalog 2 min old")
        say(text="lag checked")

    command = {"command": "/graph-lag", "text": "", "user_id": "U1", "channel_id": "C1", "team_id": "T0FAKE"}
    body = urlencode({**command, "response_url": fake.response_url("lag")})
    stamp = str(int(time.time()))
    signature = SignatureVerifier("secret").generate_signature(timestamp=stamp, body=body)
    assert signature is not None
    headers: dict[str, str | Sequence[str]] = {"x-slack-signature": signature, "x-slack-request-timestamp": stamp}

    assert app.dispatch(BoltRequest(body=body, headers=headers)).status == 200
    assert fake.responses("lag")[0]["text"] == "catalog 2 min old"
    assert [(b["channel"], b["text"]) for b in fake.posted("chat.postMessage")] == [("C1", "lag checked")]
    assert fake.calls()[0] == "auth.test"


def test_malformed_json_is_refused_and_recorded_not_dropped(client: WebClient, fake: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as error:
        client.api_call("chat.postMessage", params={"channel": "C1", "text": "t", "blocks": "[{not json"})

    assert error.value.response["error"] == "invalid_json"
    assert (fake.calls(), fake.posted("chat.postMessage")) == (["chat.postMessage"], [])


def test_the_assistant_pane_unfurl_home_and_history_methods_check_and_record_what_was_sent(
    fake: FakeSlack, client: WebClient
) -> None:
    thread = {"channel_id": "D1", "thread_ts": "1.2"}
    prompts = [{"title": "What breaks?", "message": "What breaks if redis goes down?"}]
    client.assistant_threads_setSuggestedPrompts(**thread, prompts=prompts, title="Ask")
    assert fake.posted("assistant.threads.setSuggestedPrompts")[0]["prompts"] == prompts
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        client.assistant_threads_setSuggestedPrompts(**thread, prompts=prompts * 5)
    with pytest.raises(SlackApiError, match="invalid_thread_ts"):
        client.assistant_threads_setStatus(channel_id="D1", thread_ts="", status="thinking")
    client.assistant_threads_setStatus(**thread, status="walking the graph…")
    client.assistant_threads_setTitle(**thread, title="redis")
    assert [r["title"] for r in fake.posted("assistant.threads.setTitle")] == ["redis"]

    unfurls = {"https://b.example/catalog/default/component/x": {"blocks": BLOCKS}}
    client.chat_unfurl(channel="C1", ts="1.3", unfurls=unfurls)
    assert fake.posted("chat.unfurl")[0]["unfurls"] == unfurls
    with pytest.raises(SlackApiError, match="cannot_unfurl_message"):
        client.chat_unfurl(channel="C1", unfurls=unfurls)

    client.views_publish(user_id="U1", view={"type": "home", "blocks": BLOCKS})
    assert fake.posted("views.publish")[0]["view"]["blocks"] == BLOCKS
    with pytest.raises(SlackApiError, match="invalid_arguments"):
        client.views_publish(user_id="U1", view={"type": "modal", "blocks": BLOCKS})

    fake.history["C1"] = [{"type": "message", "ts": "200.0", "text": "new"}, {"type": "message", "ts": "100.0"}]
    assert [m["ts"] for m in client.conversations_history(channel="C1", oldest="150")["messages"]] == ["200.0"]
    with pytest.raises(SlackApiError, match="not_in_channel"):
        client.conversations_history(channel="C2")

"""Each Slack handler called as a plain function, with recording doubles of ack, respond and the client.

The end-to-end tests (tests/e2e) drive the same handlers through Bolt over signed HTTP; these pin down
what each handler does with its arguments, one case at a time.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from bot.slack import commands, events, review_actions
from bot.slack.arguments import BLAST, SUSPECTS
from bot.slack.claims import Claims
from bot.slack.deps import BotDeps
from bot.slack.replies import LOADING
from bot.slack.retrying import Poster, RetryPolicy
from bot.telemetry.metrics import Metrics
from graph.health.freshness import StalePolicy, judge
from graph.review import ChunkRef, ProposedEdge, ReviewError
from tests.bot.slack.slack_doubles import MemoryClaims, RecordingAck, RecordingClient, RecordingRespond
from tests.graph.builders import BUILT_AT, chain

NOW = BUILT_AT + timedelta(minutes=3)
ADMIN = "UADMIN"
ALERTS = "CALERTS"
Json = dict[str, Any]


def make_deps(**overrides: Any) -> BotDeps:
    memory = MemoryClaims()
    built = chain("checkout", "payments", "redis")
    values: dict[str, Any] = {
        "snapshot": lambda: built,
        "claims": Claims(memory.take, memory.settle),
        "lag": lambda: judge([], NOW, StalePolicy()),
        "clock": lambda: NOW,
        "metrics": Metrics(),
        "admins": (ADMIN,),
        "watch_channels": (ALERTS,),
        **overrides,
    }
    return BotDeps(**values)


def shown(message: Json) -> str:
    return json.dumps(message)


def command(text: str, *, user: str = "UUSER", trigger: str = "1.2.3") -> Json:
    return {"text": text, "user_id": user, "channel_id": "COPS", "trigger_id": trigger}


def button(action_id: str, value: Json, *, user: str = "UUSER", trigger: str = "4.5.6") -> Json:
    return {"user": {"id": user}, "channel": {"id": "COPS"}, "trigger_id": trigger,
            "actions": [{"action_id": action_id, "value": json.dumps(value)}]}  # fmt: skip


def valid_blocks(message: Json) -> None:
    """Every block as slack_sdk's Block Kit models read and validate it."""
    for block in message["blocks"]:
        parsed = Block.parse(block)
        assert parsed is not None, block
        parsed.validate_json()


def counted(deps: BotDeps, name: str, labels: dict[str, str]) -> float:
    return deps.metrics.registry.get_sample_value(name, labels) or 0.0


def test_blast_radius_acks_then_answers_the_asker_alone() -> None:
    deps, ack, respond, client = make_deps(), RecordingAck(), RecordingRespond(), RecordingClient()
    commands.on_query_command(ack, command("redis"), respond, client, deps, name=BLAST)
    assert len(ack.calls) == 1
    [answer] = respond.sent
    assert answer["response_type"] == "ephemeral"
    assert "payments" in shown(answer) and "checkout" in shown(answer)
    assert client.posted() == []  # a command's answer goes to its response_url, never chat.postMessage
    assert counted(deps, "oncall_graph_slack_requests_total", {"kind": BLAST}) == 1


def test_suspects_for_an_unknown_name_answers_with_suggestions() -> None:
    deps, respond = make_deps(), RecordingRespond()
    commands.on_query_command(RecordingAck(), command("paymnts"), respond, RecordingClient(), deps,
                              name=SUSPECTS)  # fmt: skip
    [answer] = respond.sent
    assert "payments" in shown(answer)


def test_a_command_before_the_first_graph_says_it_is_loading() -> None:
    deps = make_deps(snapshot=lambda: None)
    respond = RecordingRespond()
    commands.on_query_command(RecordingAck(), command("redis"), respond, RecordingClient(), deps, name=BLAST)
    [answer] = respond.sent
    assert LOADING in answer["text"]


def test_graph_lag_is_refused_to_a_non_admin_and_counted() -> None:
    deps, respond = make_deps(), RecordingRespond()
    commands.on_lag_command(RecordingAck(), command("", user="UOTHER"), respond, deps)
    [answer] = respond.sent
    assert answer["text"] == commands.REFUSAL
    assert counted(deps, "oncall_graph_refused_total", {"command": "graph-lag"}) == 1


def test_graph_lag_answers_an_admin() -> None:
    deps, respond = make_deps(), RecordingRespond()
    commands.on_lag_command(RecordingAck(), command("", user=ADMIN), respond, deps)
    [answer] = respond.sent
    assert answer["text"] != commands.REFUSAL and answer["blocks"]


def test_the_share_button_posts_the_answer_in_the_channel() -> None:
    deps, respond = make_deps(), RecordingRespond()
    body = button("share_answer", {"cmd": BLAST, "name": "redis"})
    commands.on_share(RecordingAck(), body, respond, RecordingClient(), deps)
    [answer] = respond.sent
    assert answer["response_type"] == "in_channel" and "payments" in shown(answer)


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("not json", "not the command it should carry"),
        (json.dumps([1]), "not the command it should carry"),
        (json.dumps({"cmd": "rm -rf"}), 'it asks for "rm -rf"'),
        (json.dumps({"cmd": BLAST, "name": {}}), "its name is a JSON dict"),
        (json.dumps({"cmd": BLAST, "name": "redis", "depth": "abc"}), 'its depth is "abc"'),
        (json.dumps({"cmd": BLAST, "name": "redis", "depth": "\u00b2"}), "not a whole number of hops"),
        (json.dumps({"cmd": BLAST, "name": "redis", "depth": 0}), "its depth is 0"),
        (json.dumps({"cmd": BLAST, "name": "redis", "depth": True}), "its depth is true"),
        (json.dumps({"cmd": SUSPECTS, "name": "redis", "since": []}), "its window is a JSON list"),
    ],
)
def test_a_button_whose_value_cannot_be_read_is_told_what_is_wrong_and_nothing_runs(value: str, named: str) -> None:
    deps, ack, respond = make_deps(), RecordingAck(), RecordingRespond()
    body = {"user": {"id": "U1"}, "channel": {"id": "C1"}, "actions": [{"action_id": "pick_entity_0", "value": value}]}
    commands.on_pick(ack, body, respond, RecordingClient(), deps)
    [reply] = respond.sent
    assert len(ack.calls) == 1 and reply["response_type"] == "ephemeral"
    assert "could not read this button" in shown(reply) and named in json.loads(shown(reply))["text"]
    valid_blocks(reply)
    assert counted(deps, "oncall_graph_slack_requests_total", {"kind": BLAST}) == 0


@pytest.mark.parametrize("depth", [2, "2", None])
def test_a_button_depth_given_as_a_number_or_its_digits_reruns_the_command(depth: object) -> None:
    deps, respond = make_deps(), RecordingRespond()
    body = button("share_answer", {"cmd": BLAST, "name": "redis", "depth": depth})
    commands.on_share(RecordingAck(), body, respond, RecordingClient(), deps)
    [answer] = respond.sent
    assert answer["response_type"] == "in_channel" and "payments" in shown(answer)


@pytest.mark.parametrize("depth", ["\u00b2", "9" * 5000, "\u0663"])
def test_a_typed_depth_that_is_no_ascii_number_is_part_of_the_name_never_a_crash(depth: str) -> None:
    deps, respond = make_deps(), RecordingRespond()
    commands.on_query_command(RecordingAck(), command(f"redis {depth}"), respond, RecordingClient(), deps, name=BLAST)
    [answer] = respond.sent
    assert "No entity named" in shown(answer)


def mention(ts: str, text: str = "<@UBOT> what breaks if redis fails?") -> Json:
    return {"type": "app_mention", "channel": "COPS", "user": "UUSER", "ts": ts, "text": text}


def test_a_mention_is_answered_in_its_thread_once_whatever_slack_repeats() -> None:
    deps, client = make_deps(), RecordingClient()
    event = mention("1700000000.000100")
    events.on_app_mention({"event_id": "Ev1", "event": event}, event, client, deps)
    events.on_app_mention({"event_id": "Ev1", "event": event}, event, client, deps)
    twin = {**event, "type": "message"}
    events.on_app_mention({"event_id": "Ev2", "event": twin}, twin, client, deps)
    [reply] = client.posted()
    assert reply["channel"] == "COPS" and reply["thread_ts"] == "1700000000.000100"
    assert "checkout" in shown(reply)
    assert counted(deps, "oncall_graph_slack_deduplicated_total", {"kind": "retry"}) == 1
    assert counted(deps, "oncall_graph_slack_deduplicated_total", {"kind": "twin"}) == 1


QUICK = Poster(policy=RetryPolicy(sleep=lambda _s: None))  # retried at once: these tests look at the claims


def test_a_mention_whose_reply_never_arrived_is_answered_on_slacks_retry_and_only_then() -> None:
    memory = MemoryClaims()
    deps, client = make_deps(claims=Claims(memory.take, memory.settle), poster=QUICK), RecordingClient()
    event, body = mention("1700000000.000200"), {"event_id": "EvF"}
    for _ in range(QUICK.policy.attempts):
        client.fail_next("chat_postMessage", {"ok": False, "error": "internal_error"})
    events.on_app_mention(body, event, client, deps)
    assert client.posted() == [] and client.attempts.count("chat_postMessage") == QUICK.policy.attempts
    assert memory.states["event:EvF"] == "failed"
    events.on_app_mention(body, event, client, deps)  # Slack's retry: answered
    events.on_app_mention(body, event, client, deps)  # and the next one: already delivered
    [reply] = client.posted()
    assert reply["thread_ts"] == "1700000000.000200"
    assert memory.states["event:EvF"] == memory.states["reply:COPS:1700000000.000200"] == "delivered"


def test_a_failed_first_post_is_retried_and_the_mention_answered_once() -> None:
    memory, metrics = MemoryClaims(), Metrics()
    poster = Poster(metrics, QUICK.policy)
    deps = make_deps(claims=Claims(memory.take, memory.settle), poster=poster, metrics=metrics)
    client, event = RecordingClient(), mention("1700000000.000300")
    client.fail_next("chat_postMessage", {"ok": False, "error": "ratelimited", "status": 429,
                                          "headers": {"Retry-After": "1"}})  # fmt: skip
    events.on_app_mention({"event_id": "EvR"}, event, client, deps)
    events.on_app_mention({"event_id": "EvR"}, event, client, deps)
    assert len(client.posted()) == 1 and memory.states["event:EvR"] == "delivered"
    assert counted(deps, "oncall_graph_slack_post_retries_total", {"what": "mention", "reason": "ratelimited"}) == 1


def test_a_replayed_command_is_answered_once_unless_its_answer_never_arrived() -> None:
    memory = MemoryClaims()
    deps, client = make_deps(claims=Claims(memory.take, memory.settle), poster=QUICK), RecordingClient()
    respond = RecordingRespond()
    commands.on_query_command(RecordingAck(), command("redis", trigger="7.1"), respond, client, deps, name=BLAST)
    commands.on_query_command(RecordingAck(), command("redis", trigger="7.1"), respond, client, deps, name=BLAST)
    assert len(respond.sent) == 1
    assert counted(deps, "oncall_graph_slack_deduplicated_total", {"kind": "replay"}) == 1
    for _ in range(QUICK.policy.attempts):
        respond.fail_next(503)
    commands.on_query_command(RecordingAck(), command("redis", trigger="7.2"), respond, client, deps, name=BLAST)
    assert len(respond.sent) == 1 and memory.states["command:7.2"] == "failed"
    commands.on_query_command(RecordingAck(), command("redis", trigger="7.2"), respond, client, deps, name=BLAST)
    assert len(respond.sent) == 2 and memory.states["command:7.2"] == "delivered"


class ClaimsTakenWhileComputing:
    """Delivery claims whose write waits until the answer has been computed (its snapshot read): a
    handler that claimed before computing would wait here in vain; one that claims beside its answer
    goes on. `overlapped` records which."""

    def __init__(self, memory: MemoryClaims) -> None:
        self.memory, self.computed, self.overlapped = memory, threading.Event(), False
        self.claims = Claims(self.take, memory.settle)

    def take(self, key: str) -> bool:
        self.overlapped = self.computed.wait(timeout=5)
        return self.memory.take(key)

    def snapshot(self, built: Any) -> Callable[[], Any]:
        def read() -> Any:
            self.computed.set()
            return built

        return read


def test_a_command_is_computed_while_its_claim_is_taken_and_posted_once_won() -> None:
    beside = ClaimsTakenWhileComputing(MemoryClaims())
    deps = make_deps(claims=beside.claims, snapshot=beside.snapshot(chain("checkout", "payments", "redis")))
    respond = RecordingRespond()
    commands.on_query_command(RecordingAck(), command("redis", trigger="8.1"), respond, RecordingClient(), deps,
                              name=BLAST)  # fmt: skip
    assert beside.overlapped
    [answer] = respond.sent
    assert "checkout" in shown(answer) and beside.memory.states["command:8.1"] == "delivered"


def test_a_replay_that_loses_the_claim_computes_its_answer_and_posts_nothing() -> None:
    beside = ClaimsTakenWhileComputing(MemoryClaims({"command:8.2": "claimed"}))  # the first attempt answers
    deps = make_deps(claims=beside.claims, snapshot=beside.snapshot(chain("checkout", "payments", "redis")))
    respond, client = RecordingRespond(), RecordingClient()
    commands.on_query_command(RecordingAck(), command("redis", trigger="8.2"), respond, client, deps, name=BLAST)
    assert beside.overlapped
    assert respond.sent == [] and respond.attempts == 0 and client.posted() == [] and client.attempts == []
    assert beside.memory.states["command:8.2"] == "claimed"  # still the first attempt's
    assert counted(deps, "oncall_graph_slack_deduplicated_total", {"kind": "replay"}) == 1
    assert counted(deps, "oncall_graph_slack_requests_total", {"kind": BLAST}) == 0


def test_a_command_whose_post_fails_leaves_its_claim_to_be_retaken_by_the_replay() -> None:
    memory = MemoryClaims()
    deps, client, respond = (
        make_deps(claims=Claims(memory.take, memory.settle), poster=QUICK),
        RecordingClient(),
        RecordingRespond(),
    )
    for _ in range(QUICK.policy.attempts):
        respond.fail_next(503)
    commands.on_query_command(RecordingAck(), command("redis", trigger="8.3"), respond, client, deps, name=BLAST)
    assert respond.sent == [] and memory.states["command:8.3"] == "failed"
    commands.on_query_command(RecordingAck(), command("redis", trigger="8.3"), respond, client, deps, name=BLAST)
    [answer] = respond.sent
    assert "checkout" in shown(answer) and memory.states["command:8.3"] == "delivered"


def test_an_error_while_computing_a_command_gives_its_claim_back_and_is_raised() -> None:
    memory = MemoryClaims()

    def broken() -> Any:
        raise RuntimeError("a bug")

    deps, respond = make_deps(claims=Claims(memory.take, memory.settle), snapshot=broken), RecordingRespond()
    with pytest.raises(RuntimeError, match="a bug"):
        commands.on_query_command(RecordingAck(), command("redis", trigger="8.4"), respond, RecordingClient(), deps,
                                  name=BLAST)  # fmt: skip
    assert respond.sent == [] and memory.states["command:8.4"] == "failed"


def test_an_error_while_answering_settles_the_claim_failed_and_is_raised() -> None:
    memory = MemoryClaims()
    deps, client = make_deps(claims=Claims(memory.take, memory.settle), poster=QUICK), RecordingClient()
    client.fail_next("chat_postMessage", RuntimeError("a bug"))
    with pytest.raises(RuntimeError):
        events.on_app_mention({"event_id": "EvX"}, mention("1700000000.000400"), client, deps)
    assert memory.states["event:EvX"] == "failed"


def alert(ts: str, *, channel: str = ALERTS, status: str = "Triggered") -> Json:
    card = {"blocks": [
        {"type": "header", "text": {"type": "plain_text", "text": f"{status}: P1 incident"}},
        {"type": "section", "text": {"type": "mrkdwn",
         "text": "<https://acme.pagerduty.com/incidents/Q1ABCDEF|Payments error rate above 5%>"}},
        {"type": "section", "fields": [{"type": "mrkdwn", "text": "*Service:*\npayments"}]},
    ]}  # fmt: skip
    return {"type": "message", "channel": channel, "ts": ts, "text": "", "bot_id": "BPAGERDUTY",
            "bot_profile": {"id": "BPAGERDUTY", "name": "PagerDuty"}, "attachments": [card]}  # fmt: skip


@pytest.mark.parametrize(
    ("event", "answered"),
    [
        (alert("1700000100.000200"), True),
        (alert("1700000100.000200", channel="CELSEWHERE"), False),  # not a watched channel
        (alert("1700000100.000200", status="Resolved"), False),
        ({"type": "message", "channel": ALERTS, "ts": "1.2", "text": "chatter", "user": "UX"}, False),
    ],
)
def test_only_a_triggered_alert_in_a_watched_channel_gets_a_thread_reply(event: Json, answered: bool) -> None:
    deps, client = make_deps(), RecordingClient()
    events.on_message({"event_id": "EvA", "event": event}, event, client, deps)
    replies = client.posted()
    assert len(replies) == (1 if answered else 0)
    if answered:
        assert replies[0]["thread_ts"] == "1700000100.000200" and "payments" in shown(replies[0])


@pytest.mark.parametrize(
    "unreadable",
    [
        {"attachments": [], "blocks": []},  # nothing to read at all
        {"attachments": [{"color": "#a50000", "fields": [{"title": "Urgency", "value": "high"}]}]},  # no name
    ],
)
def test_an_alert_that_cannot_be_read_gets_a_short_reply_in_its_thread_once(unreadable: Json) -> None:
    deps, client = make_deps(), RecordingClient()
    event = {**alert("1700000100.000300"), **unreadable}
    events.on_message({"event_id": "EvU", "event": event}, event, client, deps)
    events.on_message({"event_id": "EvU", "event": event}, event, client, deps)  # Slack's retry
    [reply] = client.posted()
    assert reply["thread_ts"] == "1700000100.000300" and "could not read this alert" in shown(reply)
    valid_blocks(reply)
    assert counted(deps, "oncall_graph_slack_requests_total", {"kind": "alert"}) == 1


def test_the_same_incident_in_a_second_alert_message_is_not_answered_again() -> None:
    deps, client = make_deps(), RecordingClient()
    first, again = alert("1700000100.000200"), alert("1700000900.000900")
    events.on_message({"event_id": "EvA1", "event": first}, first, client, deps)
    events.on_message({"event_id": "EvA2", "event": again}, again, client, deps)
    assert len(client.posted()) == 1
    assert counted(deps, "oncall_graph_slack_deduplicated_total", {"kind": "incident"}) == 1


def edge(status: str = "pending") -> ProposedEdge:
    chunk = ChunkRef("docs/checkout.md", 1, 1, 9)
    return ProposedEdge(7, "component:default/checkout", "depends_on", "component:default/redis",
                        "checkout reads its sessions from redis", chunk, 3, "a-model", status)  # fmt: skip


def review_deps(decide: Callable[[int, str, str], ProposedEdge]) -> BotDeps:
    return make_deps(pending_reviews=lambda: (1, (edge(),)), decide_review=decide)


def test_a_review_decision_by_a_non_admin_is_refused_and_never_decided() -> None:
    decided: list[tuple[int, str, str]] = []
    deps, respond = review_deps(lambda *a: decided.append(a) or edge()), RecordingRespond()
    review_actions.on_review_decision(RecordingAck(), button("x", {"id": 7}, user="UOTHER"), respond, deps,
                                      decision="approve", action="approve")  # fmt: skip
    assert decided == []
    [answer] = respond.sent
    assert answer["text"] == review_actions.REFUSAL and answer["response_type"] == "ephemeral"


def test_an_admin_approves_an_edge_and_sees_the_queue_again_with_a_note() -> None:
    decided: list[tuple[int, str, str]] = []

    def decide(edge_id: int, decision: str, user: str) -> ProposedEdge:
        decided.append((edge_id, decision, user))
        return edge("approved")

    deps, respond = review_deps(decide), RecordingRespond()
    review_actions.on_review_decision(RecordingAck(), button("x", {"id": 7}, user=ADMIN), respond, deps,
                                      decision="approve", action="approve")  # fmt: skip
    assert decided == [(7, "approve", ADMIN)]
    [answer] = respond.sent
    assert answer["replace_original"] is True and ADMIN in shown(answer)


def test_a_decision_the_store_refuses_is_shown_as_the_note() -> None:
    def decide(edge_id: int, decision: str, user: str) -> ProposedEdge:
        raise ReviewError(f"edge #{edge_id} was already decided")

    deps, respond = review_deps(decide), RecordingRespond()
    review_actions.on_review_decision(RecordingAck(), button("x", {"id": 7}, user=ADMIN), respond, deps,
                                      decision="reject", action="reject")  # fmt: skip
    assert "already decided" in shown(respond.sent[0])


def test_the_review_queue_opens_for_an_admin_alone() -> None:
    deps, respond = review_deps(lambda *a: edge()), RecordingRespond()
    review_actions.on_review_open(RecordingAck(), button("x", {}, user=ADMIN), respond, deps)
    [answer] = respond.sent
    assert answer["response_type"] == "ephemeral" and "checkout" in shown(answer)

"""/blast-radius and /suspects take the command line's flags as people type them in Slack, and answer
a flag they cannot use with what it takes, never with "no entity named frontend --since"."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from bot.slack import commands
from bot.slack.arguments import BLAST, SUSPECTS, CommandArgs, CommandArgsError, parse_command
from tests.bot.slack.slack_doubles import RecordingAck, RecordingClient, RecordingRespond
from tests.bot.slack.test_handlers import button, command, make_deps


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("frontend --since 1h", CommandArgs("frontend", since=timedelta(hours=1))),
        ("frontend --since=1h", CommandArgs("frontend", since=timedelta(hours=1))),
        ("frontend since 1h", CommandArgs("frontend", since=timedelta(hours=1))),
        ("frontend since=90m", CommandArgs("frontend", since=timedelta(minutes=90))),
        ("frontend —since 2d", CommandArgs("frontend", since=timedelta(days=2))),  # macOS's "--"
        ("frontend --depth 3 --since 30m", CommandArgs("frontend", depth=3, since=timedelta(minutes=30))),
        ("--since 1h frontend", CommandArgs("frontend", since=timedelta(hours=1))),
        ("token cache depth 1", CommandArgs("token cache", depth=1)),
        ("frontend 6h", CommandArgs("frontend", since=timedelta(hours=6))),  # the older habit
        ("frontend --SINCE 1h", CommandArgs("frontend", since=timedelta(hours=1))),
        ("frontend", CommandArgs("frontend")),
    ],
)
def test_suspects_reads_the_name_and_its_flags(text: str, expected: CommandArgs) -> None:
    assert parse_command(SUSPECTS, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("redis --depth 2", CommandArgs("redis", depth=2)),
        ("redis --depth=1", CommandArgs("redis", depth=1)),
        ("redis depth 2", CommandArgs("redis", depth=2)),
        ("redis 2", CommandArgs("redis", depth=2)),
        ("token cache", CommandArgs("token cache")),
    ],
)
def test_blast_radius_reads_the_name_and_its_depth(text: str, expected: CommandArgs) -> None:
    assert parse_command(BLAST, text) == expected


@pytest.mark.parametrize(
    ("command_name", "text", "message"),
    [
        (SUSPECTS, "frontend --since soon", "--since: expected a window such as 6h, 30m or 2d"),
        (SUSPECTS, "frontend --since 0h", "from 1 minute to 1 year"),
        (SUSPECTS, "frontend since 99999w", "from 1 minute to 1 year"),
        (SUSPECTS, "frontend --since", "--since needs a value, e.g. --since 6h"),
        (SUSPECTS, "frontend --depth 0", "--depth: expected a whole number of hops, 1 or more; got '0'"),
        (SUSPECTS, "frontend --depth two", "--depth: expected a whole number of hops, 1 or more; got 'two'"),
        (SUSPECTS, "frontend --window 1h", "/suspects takes --since and --depth, not '--window'"),
        (BLAST, "redis --since 1h", "/blast-radius takes --depth, not '--since'"),
        (BLAST, "redis --depth -1", "--depth: expected a whole number of hops, 1 or more; got '-1'"),
        (SUSPECTS, "payments -2h", "--since: expected a window .* from 1 minute to 1 year"),  # a window, no flag
        (BLAST, "redis -1", "--depth: expected a whole number of hops, 1 or more; got '-1'"),
    ],
)
def test_a_flag_it_cannot_use_is_named_with_what_it_takes(command_name: str, text: str, message: str) -> None:
    with pytest.raises(CommandArgsError, match=message):
        parse_command(command_name, text)


def test_suspects_with_flags_answers_the_entity_in_that_window() -> None:
    deps, respond = make_deps(), RecordingRespond()
    commands.on_query_command(RecordingAck(), command("payments --since 1h --depth 1"), respond, RecordingClient(),
                              deps, name=SUSPECTS)  # fmt: skip
    [answer] = respond.sent
    shown = json.dumps(answer)
    assert "no entity named" not in shown and "(1h)" in shown and "up to 1 hop" in shown


def test_a_bad_flag_value_gets_a_polite_error_and_the_usage() -> None:
    deps, respond = make_deps(), RecordingRespond()
    commands.on_query_command(RecordingAck(), command("payments --since soon"), respond, RecordingClient(), deps,
                              name=SUSPECTS)  # fmt: skip
    [answer] = respond.sent
    assert answer["text"].startswith("/suspects: --since: expected a window such as 6h")
    assert answer["text"].endswith("Usage: /suspects NAME [--since 6h] [--depth 2]")


def test_a_suggestion_button_keeps_the_flags_it_was_asked_with() -> None:
    deps, respond = make_deps(), RecordingRespond()
    commands.on_query_command(RecordingAck(), command("paymnts --since 1h --depth 1"), respond, RecordingClient(),
                              deps, name=SUSPECTS)  # fmt: skip
    [answer] = respond.sent
    value = json.loads(next(e["value"] for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"]))
    assert value == {"cmd": SUSPECTS, "name": "component:default/payments", "since": "1h", "depth": 1}
    rerun = RecordingRespond()
    commands.on_pick(RecordingAck(), button("pick_entity_0", value), rerun, RecordingClient(), deps)
    [again] = rerun.sent
    assert "(1h)" in json.dumps(again) and "up to 1 hop" in json.dumps(again)

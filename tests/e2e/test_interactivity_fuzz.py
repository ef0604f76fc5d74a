"""Slack interactivity payloads of every shape, signed, against the real server: button clicks with
missing or odd actions and values, view submissions, shortcuts, unknown types and wrong types per
field. Each gets a 4xx or a 2xx, never a 500 or a traceback in the log, and the bot keeps answering."""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import urlencode

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import Bot
from tests.e2e.test_malformed_requests import FORM, _still_answers
from tests.fakes.slack_api import FakeSlack

ODD = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12) | st.just([]) | st.just({})
VALUES = st.one_of(
    ODD,
    st.sampled_from(['{"cmd":"blast-radius","name":"redis"}', '{"cmd":"suspects","name":"payments","since":"0h"}',
                     '{"cmd":"suspects","name":{},"since":[]}', '{"cmd":["x"]}', "null", "[1]", '{"id":"x"}',
                     '{"cmd":"blast-radius","name":"redis","depth":1e400}', "{{", '{"id":99999999999999}']),
)  # fmt: skip
ACTION_IDS = st.sampled_from(["share_answer", "pick_entity_0", "pick_entity_x", "review_open", "review_extracted",
                              "review_approve", "review_reject", "unknown"]) | ODD  # fmt: skip
ACTION = st.fixed_dictionaries(
    {}, optional={"action_id": ACTION_IDS, "value": VALUES, "type": ODD, "block_id": ODD, "selected_option": ODD}
)
PAYLOAD = st.fixed_dictionaries(
    {"type": st.sampled_from(["block_actions", "view_submission", "view_closed", "shortcut", "message_action",
                              "block_suggestion", "interactive_message", "dialog_submission", "mystery"]) | ODD},
    optional={
        "actions": st.lists(ACTION, max_size=3) | ODD,
        "user": st.fixed_dictionaries({}, optional={"id": st.sampled_from(["UADMIN", "UUSER"]) | ODD}) | ODD,
        "channel": st.fixed_dictionaries({}, optional={"id": st.just("COPS") | ODD}) | ODD,
        "team": st.fixed_dictionaries({"id": st.just("T1") | ODD}) | ODD,
        "response_url": st.just("RESPONSE") | ODD,
        "trigger_id": st.just("1.2.3") | ODD,
        "callback_id": ODD,
        "view": st.fixed_dictionaries({}, optional={"callback_id": ODD, "state": ODD, "id": ODD}) | ODD,
        "message": st.fixed_dictionaries({}, optional={"ts": ODD, "text": ODD}) | ODD,
        "container": ODD,
    },
)  # fmt: skip


def test_fuzzed_interactivity_payloads_get_4xx_or_2xx_never_a_500_or_a_traceback(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory()
    response_url = fake_slack.response_url("fuzz")

    @settings(max_examples=80, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(payload=PAYLOAD)
    def probe(payload: dict[str, object]) -> None:
        if payload.get("response_url") == "RESPONSE":
            payload["response_url"] = response_url
        answer = bot.post(urlencode({"payload": json.dumps(payload)}), FORM)
        assert answer.status_code < 500, (payload, answer.status_code, answer.text[:300])

    probe()
    _still_answers(bot, fake_slack, "after-interactivity-fuzz")
    log = bot.output()
    assert "Traceback" not in log and "Error in" not in log, log[-3000:]

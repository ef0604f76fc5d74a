"""The fake Anthropic server answers the official SDK the way the real API does."""

from __future__ import annotations

import anthropic
import pytest

from tests.fakes.anthropic_api import API_KEY, anthropic_api, error, text, tool_use


def _client(url: str, **kw: object) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=API_KEY, base_url=url, max_retries=0, **kw)  # type: ignore[arg-type]


def test_the_sdk_reads_a_scripted_text_reply_and_its_usage() -> None:
    with anthropic_api() as fake:
        fake.queue(text("redis breaks token-cache [E1]", usage={"input_tokens": 120, "output_tokens": 9}))
        reply = _client(fake.url).messages.create(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "what breaks?"}]
        )
    assert reply.content[0].type == "text" and "[E1]" in reply.content[0].text
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (120, 9)
    assert fake.messages()[0].body["messages"][0]["content"] == "what breaks?"


def test_tool_use_blocks_arrive_as_the_sdk_types() -> None:
    with anthropic_api() as fake:
        fake.queue(tool_use("read_question", {"entities": ["redis"], "intent": "blast_radius"}))
        reply = _client(fake.url).messages.create(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "q"}]
        )
    block = reply.content[0]
    assert block.type == "tool_use" and block.input == {"entities": ["redis"], "intent": "blast_radius"}


@pytest.mark.parametrize(
    ("status", "exception"),
    [(429, anthropic.RateLimitError), (529, anthropic.InternalServerError), (500, anthropic.InternalServerError)],
)
def test_errors_raise_the_sdk_exceptions(status: int, exception: type[Exception]) -> None:
    with anthropic_api() as fake:
        fake.queue(error(status))
        with pytest.raises(exception):
            _client(fake.url).messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "q"}])


def test_a_slow_reply_is_a_timeout_and_a_wrong_key_is_refused() -> None:
    with anthropic_api() as fake:
        fake.queue(text("late", delay=1.0))
        with pytest.raises(anthropic.APITimeoutError):
            _client(fake.url, timeout=0.2).messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "q"}]
            )
        wrong = anthropic.Anthropic(api_key="nope", base_url=fake.url, max_retries=0)
        with pytest.raises(anthropic.AuthenticationError):
            wrong.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "q"}])

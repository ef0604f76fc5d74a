"""The Anthropic adapter for the model ports: one SDK client, a few calls at a time, no retries.

No retries (`max_retries=0`): an on-call answer is worth more now than phrased later, so a 429, a 529
or a timeout falls back to the graph's own answer at once. Built only when ANTHROPIC_API_KEY is set;
without it no client exists and nothing touches the network.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import anthropic
import httpx

from bot.model.ports import ERROR, OVERLOADED, RATE_LIMITED, TIMEOUT, ModelCallError, ModelReply
from bot.model.prompts import EXPLAIN_SYSTEM, READ_SYSTEM, READ_TOOL, READ_TOOL_NAME, explain_message, read_message
from bot.settings import Settings
from graph.questions.model_context import ModelContext

MODEL_SLOTS = 4  # model calls in flight at once per process; more wait (up to the timeout) for a slot
READ_MAX_TOKENS = 300
OVERLOADED_STATUS = 529


class ModelCalls:
    """The shared SDK client, bounded to MODEL_SLOTS concurrent calls, errors mapped to outcomes."""

    def __init__(self, client: anthropic.Anthropic, *, timeout: float, slots: int = MODEL_SLOTS) -> None:
        self._client = client
        self._timeout = timeout
        self._slots = threading.BoundedSemaphore(slots)

    def create(self, **request: Any) -> ModelReply:
        started = time.perf_counter()
        if not self._slots.acquire(timeout=self._timeout):
            raise ModelCallError(TIMEOUT, f"no free model slot within {self._timeout:g} s", self._timeout)
        try:
            message = self._client.messages.create(**request)
        except anthropic.APITimeoutError as exc:
            raise ModelCallError(TIMEOUT, str(exc), time.perf_counter() - started) from exc
        except anthropic.RateLimitError as exc:
            raise ModelCallError(RATE_LIMITED, str(exc), time.perf_counter() - started) from exc
        except anthropic.APIStatusError as exc:
            outcome = OVERLOADED if exc.status_code == OVERLOADED_STATUS else ERROR
            raise ModelCallError(outcome, f"HTTP {exc.status_code}: {exc}", time.perf_counter() - started) from exc
        except (anthropic.AnthropicError, httpx.HTTPError, ValueError, TypeError) as exc:
            raise ModelCallError(ERROR, f"{type(exc).__name__}: {exc}", time.perf_counter() - started) from exc
        finally:
            self._slots.release()
        return _reply(message, str(request.get("model", "")), time.perf_counter() - started)


def _reply(message: Any, model: str, seconds: float) -> ModelReply:
    """The SDK builds replies leniently: a malformed body shows up here as missing or odd fields."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise ModelCallError(ERROR, f"malformed reply: no content list ({type(message).__name__})", seconds)
    texts: list[str] = []
    tools: list[tuple[str, Any]] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text" and isinstance(getattr(block, "text", None), str):
            texts.append(block.text)
        elif kind == "tool_use":
            tools.append((str(getattr(block, "name", "")), getattr(block, "input", None)))
        # thinking and other blocks are the model's own business: never shown
    usage = getattr(message, "usage", None)
    return ModelReply(
        model=str(getattr(message, "model", "") or model),
        text="".join(texts).strip(),
        stop_reason=str(getattr(message, "stop_reason", "") or ""),
        input_tokens=_count(getattr(usage, "input_tokens", 0)),
        output_tokens=_count(getattr(usage, "output_tokens", 0)),
        seconds=seconds,
        tool_calls=tuple(tools),
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


class AnthropicExplainer:
    """Phrases the graph's answer from the numbered facts of its cited subgraph."""

    def __init__(self, calls: ModelCalls, *, model: str, max_tokens: int, max_context_tokens: int) -> None:
        self._calls = calls
        self.model = model
        self.max_tokens = max_tokens
        self.max_context_tokens = max_context_tokens

    def explain(self, question: str, task: str, context: ModelContext) -> ModelReply:
        return self._calls.create(
            model=self.model,
            max_tokens=self.max_tokens,
            system=EXPLAIN_SYSTEM,
            messages=[{"role": "user", "content": explain_message(question, task, context)}],
        )


class AnthropicReader:
    """Reads a question into names, an intent and a window through one forced tool call."""

    def __init__(self, calls: ModelCalls, *, model: str) -> None:
        self._calls = calls
        self.model = model

    def read(self, question: str) -> ModelReply:
        return self._calls.create(
            model=self.model,
            max_tokens=READ_MAX_TOKENS,
            system=READ_SYSTEM,
            tools=[READ_TOOL],
            tool_choice={"type": "tool", "name": READ_TOOL_NAME},
            messages=[{"role": "user", "content": read_message(question)}],
        )


def build_model(settings: Settings) -> tuple[AnthropicExplainer, AnthropicReader] | None:
    """The explainer and reader when ANTHROPIC_API_KEY is set; None (and no client) otherwise."""
    key = settings.anthropic_api_key.strip()
    if not key:
        return None
    client = anthropic.Anthropic(
        api_key=key,
        base_url=settings.anthropic_base_url.strip() or None,
        timeout=settings.anthropic_timeout,
        max_retries=0,
    )
    calls = ModelCalls(client, timeout=settings.anthropic_timeout)
    explainer = AnthropicExplainer(
        calls,
        model=settings.anthropic_model,
        max_tokens=settings.anthropic_max_tokens,
        max_context_tokens=settings.anthropic_max_context_tokens,
    )
    return explainer, AnthropicReader(calls, model=settings.anthropic_reader_model)

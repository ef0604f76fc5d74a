"""Reading a free-text question with the model: its tool input is checked strictly, its names resolve
through the alias index (never trusted raw), and anything off falls back to `graph.questions.ask`'s reader.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from bot.model.phrasing import record_call, record_fallback
from bot.model.ports import OK, REJECTED, ModelCallError, ModelReply, QuestionReader
from bot.model.prompts import ASKS, INTENTS, MAX_NAMES, MAX_WINDOW_HOURS, NAME_CHARS, READ_TOOL_NAME
from bot.telemetry.metrics import Metrics
from graph.exposure.visibility import Viewer, can_see, resolve_for
from graph.questions.ask import CHANGES, DEPENDENCIES, IMPACT, OWNERSHIP, PATH, RISK, Mention, find_mentions
from graph.questions.wording import read_kinds
from graph.snapshot import Snapshot

MALFORMED = "malformed_tool_input"
READ_PURPOSE = "read"
GRAPH_INTENTS = {
    "blast_radius": IMPACT,
    "suspects": DEPENDENCIES,
    "dependencies": DEPENDENCIES,
    "owners": OWNERSHIP,
    "path": PATH,
    "changes": CHANGES,
    "risk": RISK,
}
_KEYS = frozenset({"entities", "intent", "asks", "window_hours"})


class MalformedReadError(ValueError):
    """The reader's tool input was not what the schema allows."""


@dataclass(frozen=True, slots=True)
class QuestionRead:
    names: tuple[str, ...]
    intent: str  # one of INTENTS
    window: timedelta | None
    asks: tuple[str, ...] = ()  # of ASKS; none given: the intent alone


@dataclass(frozen=True, slots=True)
class ResolvedRead:
    """A read whose names went through the alias index: what `graph.questions.ask.answer_intent` takes."""

    mentions: tuple[Mention, ...]
    intent: str  # a graph.questions.ask intent: the first of `kinds`
    window: timedelta | None
    names: tuple[str, ...]
    kinds: tuple[str, ...] = ()  # the graph.questions.ask kinds of every ask


def parse_read(reply: ModelReply) -> QuestionRead:
    """Exactly one read_question call whose input matches the tool's schema, or MalformedReadError."""
    if len(reply.tool_calls) != 1 or reply.tool_calls[0][0] != READ_TOOL_NAME:
        raise MalformedReadError(f"expected one {READ_TOOL_NAME} call, got {[name for name, _ in reply.tool_calls]}")
    data = reply.tool_calls[0][1]
    if not isinstance(data, Mapping):
        raise MalformedReadError(f"tool input is {type(data).__name__}, not an object")
    extra = set(data) - _KEYS
    if extra:
        raise MalformedReadError(f"unexpected fields {sorted(extra)}")
    names = data.get("entities")
    if not isinstance(names, list) or len(names) > MAX_NAMES:
        raise MalformedReadError(f"entities must be a list of at most {MAX_NAMES} names")
    if not all(isinstance(n, str) and n.strip() and len(n) <= NAME_CHARS for n in names):
        raise MalformedReadError(f"entities must be non-empty strings of at most {NAME_CHARS} characters")
    intent = data.get("intent")
    if intent not in INTENTS:
        raise MalformedReadError(f"intent {intent!r} is not one of {', '.join(INTENTS)}")
    asks = data.get("asks", [])
    if not isinstance(asks, list) or not all(a in ASKS for a in asks) or len(set(asks)) != len(asks):
        raise MalformedReadError(f"asks must be a list of distinct kinds among {', '.join(ASKS)}")
    window = _window(data.get("window_hours"))
    return QuestionRead(tuple(n.strip() for n in names), str(intent), window, tuple(str(a) for a in asks))


def _window(hours: object) -> timedelta | None:
    if hours is None:
        return None
    if isinstance(hours, bool) or not isinstance(hours, int | float) or not math.isfinite(hours):
        raise MalformedReadError(f"window_hours must be a number, got {hours!r}")
    if not 0 < hours <= MAX_WINDOW_HOURS:
        raise MalformedReadError(f"window_hours must be in (0, {MAX_WINDOW_HOURS}], got {hours}")
    return timedelta(hours=hours)


def resolve_read(snapshot: Snapshot, question: str, read: QuestionRead, viewer: Viewer) -> ResolvedRead:
    """Names through the alias index as this viewer may see them; no names at all: the question's own."""
    mentions: list[Mention] = []
    for name in read.names:
        resolution = resolve_for(snapshot, name, viewer)
        if resolution.entity is None or all(m.entity != resolution.entity for m in mentions):
            mentions.append(Mention(name, resolution.entity, resolution.candidates))
    if not read.names:
        allow = None if viewer.everything else (lambda ref: can_see(snapshot, ref, viewer))
        mentions = list(find_mentions(snapshot.aliases, question, allow))
    # A name that resolves to nothing is still one the question names: a path asked between two names,
    # one of them misspelt, stays a path question (answered with the suggestions, never for one name).
    named = len(mentions) if any(m.entity for m in mentions) else 0
    asked = read.asks or ((read.intent,) if read.intent in GRAPH_INTENTS else ())
    kinds = [GRAPH_INTENTS[a] for a in asked]
    if PATH in kinds and named < 2:
        kinds.remove(PATH)
    if RISK in kinds and named:
        kinds = [IMPACT if k == RISK else k for k in kinds]  # "most at risk if X fails": X's blast radius
    found = tuple(dict.fromkeys(kinds)) or read_kinds(question, named)
    return ResolvedRead(tuple(mentions), found[0], read.window, read.names, found)


def read_with_model(reader: QuestionReader, metrics: Metrics, question: str) -> tuple[QuestionRead | None, str]:
    """(the model's reading of the question, or None to use the deterministic reader; the call's failed
    outcome, "" unless no reply came). Every failure is logged and counted."""
    try:
        reply = reader.read(question)
    except ModelCallError as exc:
        record_call(metrics, READ_PURPOSE, exc.outcome, exc.seconds)
        record_fallback(metrics, READ_PURPOSE, exc.outcome, exc.detail)
        return None, exc.outcome
    try:
        read = parse_read(reply)
    except MalformedReadError as exc:
        record_call(metrics, READ_PURPOSE, REJECTED, reply.seconds, reply)
        record_fallback(metrics, READ_PURPOSE, MALFORMED, str(exc))
        return None, ""
    record_call(metrics, READ_PURPOSE, OK, reply.seconds, reply)
    return read, ""

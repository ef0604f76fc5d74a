"""Every question kind, declared once: its name, what it answers, what it takes, whether it looks at the
present, and its answer.

Fronts (the command line and `--json`, the MCP tools, Slack's slash commands, mentions and alert
threads, and the fronts to come) each keep a renderer table beside them, keyed by the kind's name, and
declare the kinds they take as a `Front`; `tests/bot/test_question_kinds.py` fails when a front takes a
kind it does not render, or when a kind is declared that the command line does not take. Adding a kind
is one entry here, its answer in `bot/query/`, and one renderer in each front's table.

A kind's answer takes what a front parsed (`Question`) and where and for whom it is answered
(`Ground`), so that every front asks it the same way; what a front shows of the bundle is its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.query.alert import answer_alert
from bot.query.ask import answer_ask
from bot.query.blast import answer_blast, answer_suspects
from bot.query.bundle import (
    SUSPECTS_DEPTH,
    SUSPECTS_SINCE,
    AlertAnswer,
    AlertQuery,
    AskAnswer,
    BlastAnswer,
    BlastQuery,
    DriftAnswer,
    LintAnswer,
    PathAnswer,
    ResolveAnswer,
    SuspectsAnswer,
    SuspectsQuery,
)
from bot.query.glance import GlanceAnswer, answer_glance
from bot.query.live import LiveSource
from bot.query.lookup import DRIFT_LIMIT, answer_drift, answer_lint, answer_path, answer_resolve
from bot.query.model_phrasing import ModelPorts
from graph.exposure.visibility import Viewer
from graph.health.freshness import LagReport, StalePolicy
from graph.snapshot import Snapshot

BLAST, SUSPECTS, PATH, RESOLVE, ASK = "blast-radius", "suspects", "path", "resolve", "ask"
LINT, DRIFT, LAG, ALERT, GLANCE = "lint", "drift", "lag", "alert", "glance"

# What a kind is asked about: one name, two names (from, to), a free-text question, nothing (the whole
# graph or its sources), an alert (a service's PagerDuty id, name and title), or entities already
# resolved (a pasted entity page's, a team's).
NAME, TWO_NAMES, QUESTION, NOTHING, AN_ALERT = "name", "two names", "question", "nothing", "alert"
ENTITIES = "entities"


@dataclass(frozen=True, slots=True)
class Option:
    """A flag a kind takes beside its subject (`--since`, `--depth`, `--limit`), and its value when not given."""

    name: str
    default: object = None


@dataclass(frozen=True, slots=True)
class Question:
    """What a front parsed from its asker, in the kind's terms; fields the kind does not take stay empty."""

    kind: str
    name: str = ""  # NAME, or the first of TWO_NAMES
    other: str = ""  # the second of TWO_NAMES
    text: str = ""  # QUESTION
    since: timedelta | None = None  # None: the kind's default
    depth: int | None = None  # None: the kind's default (no limit for a blast radius)
    limit: int | None = None
    alert: AlertQuery | None = None  # AN_ALERT
    refs: tuple[str, ...] = ()  # ENTITIES


@dataclass(frozen=True, slots=True)
class Ground:
    """Where and for whom a question is answered: wired by the front."""

    viewer: Viewer
    wall: datetime  # judges freshness
    policy: StalePolicy
    snapshot: Snapshot | None = None  # every kind but lag needs one
    now: datetime | None = None  # moves time windows (`--now`); None: `wall`
    model: ModelPorts | None = None
    live: LiveSource | None = None
    cpu: AbstractContextManager[object] | None = None  # the bot's work slots
    purpose: str = "ask"  # what the model's reading of a question is counted as
    lag: Callable[[], LagReport] | None = None  # the sources' marks judged (the store is an edge's)

    @property
    def graph(self) -> Snapshot:
        if self.snapshot is None:
            raise ValueError("this question is answered from a snapshot, and the front gave none")
        return self.snapshot


@dataclass(frozen=True, slots=True)
class QuestionKind:
    name: str  # the command (`oncall-graph NAME`, `/NAME`), and the MCP tool with `_` for `-`
    help: str  # what it answers: the command line's `--help` line
    subject: str  # NAME, TWO_NAMES, QUESTION, NOTHING, AN_ALERT or ENTITIES
    answer: Callable[[Question, Ground], Any]  # its bundle (`bot/query/bundle.py`)
    options: tuple[Option, ...] = ()
    live: bool = False  # looks at the present (what is failing now) when a live port is wired

    @property
    def tool(self) -> str:
        return self.name.replace("-", "_")


def _blast(question: Question, ground: Ground) -> BlastAnswer:
    query = BlastQuery(question.name, question.depth)
    return answer_blast(ground.graph, query, ground.viewer, ground.wall, ground.policy, ground.live, cpu=ground.cpu)


def _suspects(question: Question, ground: Ground) -> SuspectsAnswer:
    since, depth = question.since or SUSPECTS_SINCE, question.depth or SUSPECTS_DEPTH
    query = SuspectsQuery(question.name, since=since, depth=depth, at=ground.now)
    return answer_suspects(ground.graph, query, ground.viewer, ground.wall, ground.policy, ground.live, cpu=ground.cpu)


def _path(question: Question, ground: Ground) -> PathAnswer:
    return answer_path(ground.graph, (question.name, question.other), ground.viewer, ground.wall, ground.policy)


def _resolve(question: Question, ground: Ground) -> ResolveAnswer:
    return answer_resolve(ground.graph, question.name, ground.viewer, ground.wall, ground.policy)


def _ask(question: Question, ground: Ground) -> AskAnswer:
    g = ground
    return answer_ask(
        g.graph, question.text, g.viewer, g.now or g.wall, g.policy, g.model, purpose=g.purpose, cpu=g.cpu,
        wall=g.wall, live=g.live,
    )  # fmt: skip


def _lint(question: Question, ground: Ground) -> LintAnswer:
    return answer_lint(ground.graph, ground.viewer, ground.wall, ground.policy)


def _drift(question: Question, ground: Ground) -> DriftAnswer:
    return answer_drift(ground.graph, ground.viewer, ground.wall, ground.policy, limit=question.limit)


def _lag(question: Question, ground: Ground) -> LagReport:
    if ground.lag is None:
        raise ValueError("lag is answered from the sources' marks, and the front gave none")
    return ground.lag()


def _alert(question: Question, ground: Ground) -> AlertAnswer:
    if question.alert is None:
        raise ValueError("an alert question carries its alert")
    g = ground
    return answer_alert(g.graph, question.alert, g.viewer, g.wall, g.policy, g.model, cpu=g.cpu, live=g.live)


def _glance(question: Question, ground: Ground) -> GlanceAnswer:
    return answer_glance(ground.graph, question.refs, ground.viewer, ground.wall, ground.policy, cpu=ground.cpu)


QUESTION_KINDS: tuple[QuestionKind, ...] = (
    QuestionKind(BLAST, "what breaks if NAME goes down", NAME, _blast, (Option("depth"),), live=True),
    QuestionKind(
        SUSPECTS,
        "the on-call view of an alert on NAME",
        NAME,
        _suspects,
        (Option("since", SUSPECTS_SINCE), Option("depth", SUSPECTS_DEPTH)),
        live=True,
    ),
    QuestionKind(PATH, "the shortest cited chain between two entities", TWO_NAMES, _path),
    QuestionKind(RESOLVE, "the canonical entity for a name", NAME, _resolve),
    QuestionKind(ASK, "a free-text question", QUESTION, _ask, live=True),
    QuestionKind(LINT, "the hygiene report", NOTHING, _lint),
    QuestionKind(
        DRIFT,
        "where the catalog and the traffic disagree, and how much the graph can know",
        NOTHING,
        _drift,
        (Option("limit", DRIFT_LIMIT),),
    ),
    QuestionKind(LAG, "how fresh each source is", NOTHING, _lag),
    # Asked by an alert in a watched channel or a PagerDuty webhook, never typed: the command line asks
    # `suspects` (and `blast-radius`) for the service instead.
    QuestionKind(ALERT, "the suspects and blast radius of an alert", AN_ALERT, _alert, live=True),
    # Asked by a pasted entity page (an unfurl) and App Home, never typed: `blast-radius` is the typed form.
    QuestionKind(GLANCE, "what breaks if each entity goes down, its owners, its last deploy", ENTITIES, _glance),
)
_BY_NAME = {kind.name: kind for kind in QUESTION_KINDS}


def question_kind(name: str) -> QuestionKind:
    """The declared kind called `name`; raises KeyError naming the known kinds."""
    kind = _BY_NAME.get(name)
    if kind is None:
        raise KeyError(f"no question kind {name!r} (known: {', '.join(_BY_NAME)})")
    return kind


def answer(question: Question, ground: Ground) -> Any:
    """The bundle of `question`'s kind, asked on `ground`."""
    return question_kind(question.kind).answer(question, ground)


@dataclass(frozen=True, slots=True)
class Front:
    """Where questions are asked: the kinds it takes (read from its own parser or handlers, never from its
    table) and its renderer table, keyed by kind. `tests/bot/test_question_kinds.py` lists every front."""

    name: str
    takes: frozenset[str]
    renders: Mapping[str, object]

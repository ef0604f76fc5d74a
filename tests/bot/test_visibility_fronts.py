"""Hidden entities stay hidden in everything derived from them, in every front and output format.

A Backstage catalog with a secrets tier (tests/data/visibility) is synced into a real SQLite file:
`vault-proxy` (restricted) sits in the middle of chains, `hsm` is a restricted leaf, `secops` a
restricted owner group of a visible service, and runbooks name them by name, title and alias — in a
file name, a section heading and prose. Every output an outsider can get is searched for every hidden
name and alias (case-insensitive); an insider still gets the whole answer.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.mcp.tools import GraphAccess, call_tool
from bot.model.claude import build_model
from bot.query.alert import answer_alert
from bot.query.ask import answer_ask
from bot.query.blast import answer_blast, answer_suspects
from bot.query.bundle import AlertQuery, BlastQuery, SuspectsQuery
from bot.query.lookup import answer_path, answer_resolve
from bot.query.model_phrasing import ModelPorts
from bot.query.replies import ask_reply, blast_reply, path_reply, resolve_reply, suspects_reply
from bot.render.dot import alert_dot, blast_dot, suspects_dot, view_dot
from bot.settings import Settings
from bot.slack.blocks.blast import format_blast_radius
from bot.slack.blocks.kit import SlackMessage
from bot.slack.blocks.messages import format_answer, format_unresolved
from bot.slack.blocks.suspects import format_alert_reply, format_suspects
from bot.telemetry.metrics import Metrics
from graph.exposure.redaction import HIDDEN_SOURCE
from graph.exposure.visibility import Viewer
from graph.health.freshness import StalePolicy
from graph.snapshot import Snapshot, SnapshotRef
from sync.refresh import load_snapshot, sync_once
from sync.sources.registry import SourceSpec
from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store
from tests.fakes.anthropic_api import API_KEY, FakeAnthropic, anthropic_api, text

DATA = Path(__file__).resolve().parents[1] / "data" / "visibility"
NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
POLICY = StalePolicy()
OUTSIDER = Viewer(channel="C0OPS", user="U0BOB")
INSIDER = Viewer(channel="C0SEC", user="U0ALICE")  # sees vault-proxy and secops (channel), hsm (user)
# Every name, title and alias of the restricted entities, as words may carry them.
HIDDEN_TERMS = re.compile(
    r"vault[\s_-]*proxy|vp[\s_-]*gateway|secret[\s_-]*broker|\bhsm\b|hardware security module|secops|PVLT123",
    re.IGNORECASE,
)
QUESTIONS = (
    "what breaks if redis goes down?",
    "what does web depend on?",
    "who owns billing?",
    "how are portal and redis connected?",
    "what depends on redis?",
    "does portal break if redis goes down?",  # yes: through vault-proxy, hidden from an outsider
)


def clock() -> datetime:
    return NOW


@pytest.fixture(scope="module")
def snap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Snapshot]:
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('visibility') / 'graph.db'}")
    migrate(engine)
    store = Store(engine)
    specs = [SourceSpec("catalog", str(DATA / "catalog-info.yaml")), SourceSpec("docs", str(DATA / "runbooks"))]
    sync_once(specs, store, SnapshotRef(), clock, swap=False)
    loaded = load_snapshot(store, clock)
    assert loaded is not None
    yield loaded
    engine.dispose()


def leaks(output: str) -> list[str]:
    return HIDDEN_TERMS.findall(output)


def slack(message: SlackMessage) -> str:
    """Everything a Slack message carries: notification text, blocks (buttons' values too), the attached file."""
    return html.unescape(json.dumps([message.text, message.blocks, message.full_text], ensure_ascii=False))


def plain(lines: list[Any]) -> str:
    return "\n".join(line.plain for line in lines)


def every_output(snapshot: Snapshot, viewer: Viewer) -> dict[str, str]:
    """What each front renders for this viewer: CLI text and JSON shapes, Slack messages, DOT (the PNG's input)."""
    out: dict[str, str] = {}
    for name in ("redis", "billing", "web", "portal"):
        blast = answer_blast(snapshot, BlastQuery(name), viewer, NOW, POLICY)
        reply = blast_reply(blast)
        out[f"blast {name} json"], out[f"blast {name} text"] = json.dumps(reply.data), plain(reply.text())
        assert blast.result is not None
        out[f"blast {name} slack"] = slack(format_blast_radius(blast.result, blast.freshness, passages=blast.passages))
        out[f"blast {name} dot"] = blast_dot(blast.result).source
        found = answer_suspects(snapshot, SuspectsQuery(name, at=NOW), viewer, NOW, POLICY)
        reply = suspects_reply(found, snapshot)
        out[f"suspects {name} json"], out[f"suspects {name} text"] = json.dumps(reply.data), plain(reply.text())
        assert found.result is not None
        out[f"suspects {name} slack"] = slack(format_suspects(found.result, found.freshness, passages=found.passages))
        out[f"suspects {name} dot"] = suspects_dot(found.result, snapshot).source
        alert = answer_alert(snapshot, AlertQuery("", name, f"{name} latency high"), viewer, NOW, POLICY)
        assert alert.suspects is not None and alert.impact is not None
        message = format_alert_reply(alert.suspects, alert.impact, alert.freshness, passages=alert.passages)
        out[f"alert {name} slack"] = slack(message)
        out[f"alert {name} dot"] = alert_dot(alert.suspects, alert.impact, snapshot).source
    for a, b in (("web", "redis"), ("portal", "redis"), ("checkout", "redis"), ("billing", "redis")):
        reply = path_reply(answer_path(snapshot, (a, b), viewer, NOW, POLICY))
        out[f"path {a} {b} json"], out[f"path {a} {b} text"] = json.dumps(reply.data), plain(reply.text())
    for question in QUESTIONS:
        asked = answer_ask(snapshot, question, viewer, NOW, POLICY)
        reply = ask_reply(asked)
        out[f"ask {question} json"], out[f"ask {question} text"] = json.dumps(reply.data), plain(reply.text())
        out[f"ask {question} slack"] = slack(format_answer(asked.answer, asked.freshness))
        picture = view_dot(asked.view(), snapshot)
        out[f"ask {question} dot"] = picture.source if picture else ""
    return out


def test_an_outsider_finds_no_hidden_name_in_any_output(snap: Snapshot) -> None:
    found = {key: leaks(value) for key, value in every_output(snap, OUTSIDER).items()}
    assert {key: hits for key, hits in found.items() if hits} == {}


def test_an_insider_still_gets_the_whole_answer(snap: Snapshot) -> None:
    out = every_output(snap, INSIDER)
    assert "vault-proxy" in out["blast redis json"] and "hsm" in out["suspects web text"]
    assert "secops" in out["blast billing dot"] and "secops" in out["suspects billing dot"]
    assert "runbooks/vault-proxy.md:3" in out["path web redis json"]
    assert json.loads(out["path portal redis json"])["path"] == [
        "component:default/portal", "component:default/vault-proxy", "resource:default/redis",
    ]  # fmt: skip
    assert "Secret Broker" in out["blast redis slack"] or "Secret Broker" in out["suspects redis slack"]


def test_a_locator_naming_a_hidden_entity_reads_as_a_placeholder(snap: Snapshot) -> None:
    """web -> redis is asserted in runbooks/vault-proxy.md; billing -> redis under a heading naming the HSM."""
    [edge] = path_reply(answer_path(snap, ("web", "redis"), OUTSIDER, NOW, POLICY)).data["edges"]
    assert edge["src"] == "component:default/web" and edge["sources"] == [HIDDEN_SOURCE]
    billing = path_reply(answer_path(snap, ("billing", "redis"), OUTSIDER, NOW, POLICY)).data
    sources = billing["edges"][0]["sources"]
    assert HIDDEN_SOURCE in sources and any(s.startswith("catalog-info.yaml") or "#" in s for s in sources)
    assert billing["edges"][0]["weight"] == 2  # the redacted receipt still counts


def test_a_chain_only_through_a_hidden_entity_is_no_chain_for_an_outsider(snap: Snapshot) -> None:
    data = path_reply(answer_path(snap, ("portal", "redis"), OUTSIDER, NOW, POLICY)).data
    assert data["path"] == [] and data["edges"] == []
    asked = answer_ask(snap, "how are portal and redis connected?", OUTSIDER, NOW, POLICY)
    assert asked.answer.sentences and not leaks(" ".join(asked.answer.sentences))


def test_owners_and_passages_of_visible_entities_skip_hidden_ones(snap: Snapshot) -> None:
    found = answer_suspects(snap, SuspectsQuery("billing", at=NOW), OUTSIDER, NOW, POLICY)
    assert found.result is not None and found.result.owners == ()
    blast = answer_blast(snap, BlastQuery("redis"), OUTSIDER, NOW, POLICY)
    quoted = [p.locator for p in blast.passages]
    assert quoted and all("Secrets" not in q and "TLS" not in q for q in quoted)
    inside = answer_blast(snap, BlastQuery("redis"), INSIDER, NOW, POLICY)
    assert any("Secrets" in p.locator or "TLS" in p.locator for p in inside.passages) or len(inside.passages) == 3


def test_unresolved_hidden_names_read_like_unknown_ones(snap: Snapshot) -> None:
    for name in ("vault-proxy", "Secret Broker", "PVLT123", "hsm", "secops"):
        resolved = answer_resolve(snap, name, OUTSIDER, NOW, POLICY).resolved
        shown = json.dumps(resolve_reply(answer_resolve(snap, name, OUTSIDER, NOW, POLICY)).data)
        assert resolved.entity is None and not leaks(shown.replace(json.dumps(name)[1:-1], ""))
        message = slack(format_unresolved(name, resolved.resolution, command="blast-radius"))
        assert not leaks(message.replace(name, ""))
    assert answer_resolve(snap, "vp-gateway", INSIDER, NOW, POLICY).resolved.entity == "component:default/vault-proxy"


def test_mcp_tools_answer_as_an_outsider_unless_configured(snap: Snapshot) -> None:
    def access(viewer: Viewer | None = None) -> GraphAccess:
        lag: dict[str, Any] = {"sources": [], "stale": False}
        base = GraphAccess(lambda: snap, lambda: lag, clock, POLICY, now=NOW)
        return base if viewer is None else GraphAccess(lambda: snap, lambda: lag, clock, POLICY, now=NOW, viewer=viewer)

    calls = [
        ("blast_radius", {"name": "redis"}), ("suspects", {"name": "web"}), ("suspects", {"name": "billing"}),
        ("path", {"from": "portal", "to": "redis"}), ("path", {"from": "web", "to": "redis"}),
        ("resolve", {"name": "vault-proxy"}), ("resolve", {"name": "vault prox"}),
    ]  # fmt: skip
    for tool, arguments in calls:
        shown = json.dumps(call_tool(access(), tool, arguments))
        assert not leaks(shown.replace("vault-proxy", "").replace("vault prox", "")), (tool, arguments)
    everything = access(Viewer(everything=True))
    assert "vault-proxy" in json.dumps(call_tool(everything, "blast_radius", {"name": "redis"}))
    insider = json.dumps(call_tool(access(INSIDER), "suspects", {"name": "web"}))
    assert "hsm" in insider and "secops" in insider


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with anthropic_api() as server:
        yield server


def test_the_model_prompt_never_holds_a_hidden_name(
    snap: Snapshot, fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    built = build_model(Settings(ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=fake.url))
    assert built is not None
    model = ModelPorts(built[0], None, Metrics())
    for question in QUESTIONS:
        fake.queue(text("Nothing to add [E1]."))
        answer_ask(snap, question, OUTSIDER, NOW, POLICY, model)
    for name in ("redis", "web", "billing"):
        fake.queue(text("Nothing to add [E1]."))
        answer_alert(snap, AlertQuery("", name, "latency"), OUTSIDER, NOW, POLICY, model)
    prompts = [json.dumps(call.body) for call in fake.messages()]
    assert prompts and [leaks(p) for p in prompts] == [[] for _ in prompts]
    fake.queue(text("Nothing to add [E1]."))
    answer_alert(snap, AlertQuery("", "redis", "latency"), INSIDER, NOW, POLICY, model)
    assert leaks(json.dumps(fake.messages()[-1].body))


def test_metrics_count_hidden_and_unknown_names_alike(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "bot.telemetry.unresolved_names")
    metrics = Metrics()
    metrics.unresolved_name("blast-radius", "vault-proxy")  # hidden from the asker
    metrics.unresolved_name("blast-radius", "vault-proxx")  # names nothing
    samples = [s for m in metrics.registry.collect() for s in m.samples if "unresolved" in s.name]
    assert [(s.labels, s.value) for s in samples if s.name.endswith("_total")] == [({"command": "blast-radius"}, 2.0)]
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["unresolved name in blast-radius: 'vault proxy'", "unresolved name in blast-radius: 'vault proxx'"]

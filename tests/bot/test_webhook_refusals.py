"""Deploy webhook refusals: one that anyone can cause (unsigned, wrongly signed, too large to check)
writes nothing to the database, only a log line, a counter and this replica's memory; one after the
sender proved itself (a bad body) is stored. Lag says which is which, in Slack and in JSON."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.models.blocks import Block
from sqlalchemy import event
from sqlalchemy.engine import Engine

from bot.http import MAX_BODY
from bot.query.lag import answer_lag
from bot.render.json import lag_json
from bot.slack.blocks.freshness import format_lag
from bot.telemetry.metrics import Metrics
from bot.webhooks.deploys import DeployWebhook, native_auth, read_native
from bot.webhooks.refusals import Unproven
from graph.health.freshness import StalePolicy
from sync.push import PushIntake
from sync.store.database import make_engine, migrate
from sync.store.fact_store import Store
from tests.bot.slack.test_blocks import texts

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SECRET = "ci-secret"


def call(app: DeployWebhook, body: bytes, **headers: str) -> tuple[str, dict[str, Any]]:
    environ = {"REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), **headers}
    answered: list[str] = []
    [raw] = app(environ, lambda status, _headers: answered.append(status))
    return answered[0], json.loads(raw)


def signed(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'graph.db'}")
    migrate(engine)
    yield engine
    engine.dispose()


def writes_during(engine: Engine) -> list[str]:
    """Every statement that writes, recorded from now on, as the driver is handed it."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().split()[0].upper() in ("INSERT", "UPDATE", "DELETE"):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    return seen


def test_a_refusal_anyone_can_cause_writes_nothing_and_is_counted_in_memory(engine: Engine) -> None:
    store, metrics, unproven = Store(engine), Metrics(), Unproven(lambda: AT)
    intake = PushIntake(store, lambda: AT, refresh=None)
    app = DeployWebhook("deploys", intake, native_auth([SECRET], ["a-token"]), read_native, unproven, metrics)
    event_body = json.dumps({"id": "ci-1", "service": "antifraud", "deployed_at": "2026-12-01T11:00:00Z"}).encode()
    writes = writes_during(engine)
    for _ in range(20):
        assert call(app, event_body)[0].startswith("401")
        assert call(app, event_body, HTTP_X_SIGNATURE_256="sha256=00")[0].startswith("401")
        assert call(app, event_body, HTTP_AUTHORIZATION="Bearer wrong")[0].startswith("401")
    assert call(app, b"x" * (MAX_BODY + 1))[0].startswith("413")
    intake.close()
    assert writes == []
    assert store.source_states()["webhook:deploys"].last_refused == ""
    seen = unproven.seen()["webhook:deploys"]
    assert (seen.count, seen.last_at) == (61, AT) and seen.last_why.startswith("413 body is over")
    counted = metrics.registry.get_sample_value
    assert counted("oncall_graph_webhook_refusals_total", {"source": "webhook:deploys", "status": "401"}) == 60
    assert counted("oncall_graph_webhook_refusals_total", {"source": "webhook:deploys", "status": "413"}) == 1


def test_a_bad_body_from_a_proven_sender_is_stored_and_lag_tells_the_two_apart(engine: Engine) -> None:
    store, unproven = Store(engine), Unproven(lambda: AT)
    intake = PushIntake(store, lambda: AT, refresh=None)
    app = DeployWebhook("deploys", intake, native_auth([SECRET], []), read_native, unproven)
    assert call(app, b"{}", HTTP_X_SIGNATURE_256="sha256=00")[0].startswith("401")
    bad = json.dumps({"id": "ci-2", "deployed_at": "2026-12-01T11:00:00Z"}).encode()
    writes = writes_during(engine)
    assert call(app, bad, HTTP_X_SIGNATURE_256=signed(bad))[0].startswith("400")
    intake.close()
    assert any("last_refused" in w for w in writes)
    assert "field service" in store.source_states()["webhook:deploys"].last_refused

    marks = [state.mark() for state in store.source_states().values()]
    report = answer_lag(marks, [], AT, StalePolicy(), unproven=unproven.seen()).report
    message = format_lag(report, now=AT)
    for block in message.blocks:
        parsed = Block.parse(block)
        assert parsed is not None
        parsed.validate_json()
    shown = "\n".join(texts(list(message.blocks)))
    assert "last authenticated delivery refused at 2026-12-01 12:00 UTC: `field service" in shown
    assert "1 unauthenticated delivery refused by this replica since it started" in shown
    assert "`401 X-Signature-256 matches none" in shown
    [pushed] = [s for s in lag_json(report)["sources"] if s["name"] == "webhook:deploys"]
    assert pushed["last_refused"]["why"].startswith("field service")
    why = "401 X-Signature-256 matches none of ONCALL_GRAPH_DEPLOY_WEBHOOK_SECRETS"
    assert pushed["refused_unauthenticated"] == {"count": 1, "at": AT.isoformat(), "why": why}

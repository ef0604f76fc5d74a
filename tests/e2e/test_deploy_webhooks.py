"""Deploys pushed into the running bot over real HTTP, signed in the test, seen by /suspects."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from sync.store import schema
from sync.store.database import make_engine
from tests.e2e.conftest import ADMIN, Bot, write_sources
from tests.e2e.test_slack_bot import only_response, text_of
from tests.e2e.webhook_posts import (
    DEPLOY_SECRET,
    DEPLOY_TOKEN,
    GITHUB_SECRET,
    deployment_status,
    github,
    native,
    raw,
    recent,
    suspects_until,
)
from tests.fakes.slack_api import FakeSlack

ON = {
    "GITHUB_WEBHOOK_SECRETS": f"{GITHUB_SECRET},gh-secret-old",
    "ONCALL_GRAPH_DEPLOY_WEBHOOK_SECRETS": DEPLOY_SECRET,
    "ONCALL_GRAPH_DEPLOY_WEBHOOK_TOKENS": DEPLOY_TOKEN,
}


def stored(database_url: str, source: str) -> int:
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            query = select(func.count()).where(schema.facts.c.source == source)
            return int(conn.execute(query).scalar_one())
    finally:
        engine.dispose()


def test_a_github_deployment_status_reaches_suspects_and_a_redelivery_stores_nothing_new(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, database_url: str
) -> None:
    bot = bot_factory(database_url=database_url, **ON)
    body = raw(deployment_status(4242))
    answer = github(bot, body, delivery="d-1")
    assert answer.status_code == 202
    assert answer.json() == {"status": "accepted", "stored": ["gh-4242"], "repeated": []}
    shown = suspects_until(bot, fake_slack, "gh-4242")
    assert "antifraud" in shown and "v4.0.0" in shown
    again = github(bot, body, delivery="d-1")  # GitHub's "Redeliver"
    assert (again.status_code, again.json()["status"]) == (202, "repeated")
    other = github(bot, body, delivery="d-2")  # the same deployment in another delivery
    assert (other.status_code, other.json()["repeated"]) == (202, ["gh-4242"])
    assert stored(database_url, "webhook:github") == 1


def test_github_pings_other_events_and_unfinished_statuses_store_nothing(
    bot_factory: Callable[..., Bot], database_url: str
) -> None:
    bot = bot_factory(database_url=database_url, **ON)
    ping = github(bot, raw({"zen": "Keep it logically awesome.", "hook_id": 1}), event="ping")
    assert (ping.status_code, ping.json()["status"]) == (200, "pong")
    push = github(bot, raw({"ref": "refs/heads/main"}), event="push")
    assert (push.status_code, push.json()["status"]) == (202, "ignored")
    queued = github(bot, raw(deployment_status(7, state="in_progress")))
    assert (queued.status_code, queued.json()["status"]) == (202, "ignored")
    assert stored(database_url, "webhook:github") == 0


def test_a_github_deployment_event_is_a_deploy_and_its_later_status_repeats_it(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(**ON)
    event = deployment_status(5150)
    del event["deployment_status"]
    created = github(bot, raw(event), event="deployment")
    assert (created.status_code, created.json()["stored"]) == (202, ["gh-5150"])
    finished = github(bot, raw(deployment_status(5150)))
    assert (finished.status_code, finished.json()["status"]) == (202, "repeated")
    suspects_until(bot, fake_slack, "gh-5150")


def test_unsigned_wrongly_signed_oversized_and_wrong_method_are_refused_and_rotation_works(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, database_url: str
) -> None:
    bot = bot_factory(database_url=database_url, **ON)
    body = raw(deployment_status(99))
    assert github(bot, body, secret=None).status_code == 401
    assert github(bot, body, secret="not-the-secret").status_code == 401
    event = raw({"id": "x", "service": "antifraud", "deployed_at": recent()})
    assert native(bot, event, secret="nope").status_code == 401
    assert native(bot, b"{}", secret=None).status_code == 401
    assert native(bot, b"{}", secret=None, token="wrong-token").status_code == 401
    huge = raw({"id": "big", "service": "antifraud", "deployed_at": recent(), "summary": "x" * 1_100_000})
    assert native(bot, huge).status_code == 413
    assert github(bot, huge).status_code == 413
    wrong = bot.http.get(f"{bot.url}/webhooks/github")
    assert (wrong.status_code, wrong.headers["Allow"]) == (405, "POST")
    assert stored(database_url, "webhook:github") + stored(database_url, "webhook:deploys") == 0
    rotated = github(bot, body, secret="gh-secret-old")  # the old secret still works during a rotation
    assert (rotated.status_code, rotated.json()["stored"]) == (202, ["gh-99"])
    bot.command("/graph-lag", "", fake_slack.response_url("lag"), user=ADMIN)
    lag = text_of(only_response(fake_slack, "lag"))
    assert "webhook:github* (pushed)" in lag and "last event" in lag
    # Anyone can send these: nothing written, counted in memory and in /metrics, shown as this replica's.
    assert "authenticated delivery refused" not in lag.replace("unauthenticated", "")
    assert "3 unauthenticated deliveries refused by this replica" in lag  # github: 2 unsigned, 1 too large
    assert "4 unauthenticated deliveries refused by this replica" in lag  # deploys: 3 unsigned, 1 too large
    assert "413 body is over" in lag
    assert last_refused(database_url) == {"webhook:github": "", "webhook:deploys": ""}
    metrics = {(s.labels["source"], s.labels["status"]): s.value
               for f in text_string_to_metric_families(httpx.get(f"{bot.url}/metrics").text)
               for s in f.samples if s.name == "oncall_graph_webhook_refusals_total"}  # fmt: skip
    assert metrics == {("webhook:github", "401"): 2, ("webhook:github", "413"): 1,
                       ("webhook:deploys", "401"): 3, ("webhook:deploys", "413"): 1}  # fmt: skip
    assert "Traceback" not in bot.output()


def last_refused(database_url: str) -> dict[str, str]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(schema.sources.c.name, schema.sources.c.last_refused))
            return {name: why for name, why in rows if name.startswith("webhook:")}
    finally:
        engine.dispose()


def test_bad_bodies_get_400_naming_the_field_and_nothing_is_half_stored(
    bot_factory: Callable[..., Bot], database_url: str
) -> None:
    bot = bot_factory(database_url=database_url, **ON)
    good = {"id": "ci-1", "service": "antifraud", "deployed_at": recent(), "version": "v5"}
    bad = {"id": "ci-2", "deployed_at": recent()}
    batch = native(bot, raw([good, bad]))
    assert batch.status_code == 400
    assert "field service" in batch.json()["error"] and "#2" in batch.json()["error"]
    when = native(bot, raw({**good, "deployed_at": "yesterday"}))
    assert when.status_code == 400 and "field deployed_at" in when.json()["error"]
    assert native(bot, b"{not json").status_code == 400
    assert native(bot, b"\xff\xfe").status_code == 400
    status = deployment_status(3)
    del status["deployment_status"]["state"]
    assert "deployment_status.state" in github(bot, raw(status)).json()["error"]
    assert "field deployment_status" in github(bot, raw({"zen": 1})).json()["error"]
    assert stored(database_url, "webhook:deploys") + stored(database_url, "webhook:github") == 0
    assert "field deployment_status" in last_refused(database_url)["webhook:github"]  # a proven sender's: stored
    assert native(bot, raw(good)).json()["stored"] == ["ci-1"]  # the good event alone is taken, once
    assert "Traceback" not in bot.output()


def test_a_ci_step_posts_json_lines_with_a_bearer_token(bot_factory: Callable[..., Bot], fake_slack: FakeSlack) -> None:
    bot = bot_factory(**ON)
    lines = "\n".join(json.dumps({"id": f"argo-{n}", "service": "antifraud", "deployed_at": recent(n),
                                  "repository": "acme/antifraud"}) for n in (1, 2))  # fmt: skip
    answer = native(bot, lines.encode(), secret=None, token=DEPLOY_TOKEN)
    assert (answer.status_code, answer.json()["stored"]) == (202, ["argo-1", "argo-2"])
    shown = suspects_until(bot, fake_slack, "argo-2")
    assert "argo-1" in shown


def test_without_secrets_the_endpoints_are_not_served(bot_factory: Callable[..., Bot]) -> None:
    bot = bot_factory()
    assert github(bot, raw(deployment_status(1))).status_code == 404
    assert native(bot, raw({"id": "a", "service": "antifraud", "deployed_at": recent()})).status_code == 404


def test_a_push_source_is_stale_only_past_its_own_limit(bot_factory: Callable[..., Bot], fake_slack: FakeSlack) -> None:
    bot = bot_factory(**ON, ONCALL_GRAPH_STALE_AFTER="webhook:deploys=1")
    bot.command("/graph-lag", "", fake_slack.response_url("lag"), user=ADMIN)
    lag = text_of(only_response(fake_slack, "lag"))
    assert "STALE *webhook:deploys* (pushed) — no event yet, limit 1" in lag.replace("⚠ ", "")
    assert "ok *webhook:github* (pushed) — no event yet, limit off" in lag.replace("✅ ", "")
    bot.command("/suspects", "payments", fake_slack.response_url("s"))
    assert "webhook:github" not in text_of(only_response(fake_slack, "s"))  # no limit: never warned about


def test_two_bots_on_one_postgresql_the_follower_shows_the_pushed_deploy(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack, postgres_url: str, tmp_path: Path
) -> None:
    sources = write_sources(tmp_path / "shared")
    one = bot_factory("one", database_url=postgres_url, sources=sources, **ON)
    two = bot_factory("two", database_url=postgres_url, sources=sources, **ON)
    body = raw(deployment_status(8080))
    assert github(one, body, delivery="p-1").json()["stored"] == ["gh-8080"]
    assert github(two, body, delivery="p-1").json()["status"] == "repeated"  # stored once, whichever replica
    suspects_until(two, fake_slack, "gh-8080")
    suspects_until(one, fake_slack, "gh-8080")
    assert stored(postgres_url, "webhook:github") == 1
    # Both now serve that version: the next push is one deploys-only step, a delta on both replicas.
    assert github(one, raw(deployment_status(8081)), delivery="p-2").json()["stored"] == ["gh-8081"]
    suspects_until(two, fake_slack, "gh-8081")
    suspects_until(one, fake_slack, "gh-8081")
    for bot in (one, two):
        assert (updates(bot).get("delta") or 0) >= 1, bot.output()


def updates(bot: Bot) -> dict[str, float]:
    """`oncall_graph_snapshot_updates_total` on the bot's /metrics, by how."""
    text = httpx.get(f"{bot.url}/metrics", timeout=5).text
    return {
        sample.labels["how"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "oncall_graph_snapshot_updates_total"
    }


def test_the_freshest_of_many_pushed_deploys_leads_slash_suspects_and_the_rest_are_counted(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    """Pushed oldest first, one batch of eight: /suspects shows the five newest, newest first."""
    bot = bot_factory(**ON)
    batch = [{"id": f"burst-{n}", "service": "payments", "deployed_at": recent(40 - 5 * n)} for n in range(8)]
    assert native(bot, raw(batch)).status_code == 202
    shown = suspects_until(bot, fake_slack, "burst-7")
    listed = [word for word in shown.replace("|", " ").replace(">", " ").split() if word.startswith("burst-")]
    assert list(dict.fromkeys(listed)) == ["burst-7", "burst-6", "burst-5", "burst-4", "burst-3"], listed
    assert "… and 3 more of its own deploys" in shown

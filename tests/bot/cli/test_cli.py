"""The command line, run as a subprocess exactly as a user or script would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
SEED = ROOT / "examples" / "seed-demo" / "docs"
ACME = ROOT / "examples" / "acme"
ACME_SOURCES = [
    "--catalog", str(ACME / "catalog"), "--deploys", str(ACME / "deploys.jsonl"), "--docs", str(ACME / "runbooks"),
    "--triples", str(ACME / "triples.json"), "--aliases", str(ACME / "aliases.yaml"),
]  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The default database is ./oncall-graph.db: each test starts from an empty one.
    monkeypatch.chdir(tmp_path)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "SLACK_", "ANTHROPIC_", "DATABASE_"))
    }
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        cwd=Path.cwd(),
        env={**env, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


def run_json(*args: str) -> tuple[int, Any]:
    done = run(*args, "--json")
    return done.returncode, json.loads(done.stdout)


def test_seed_demo_blast_radius_of_redis_names_the_chain_and_the_survivors() -> None:
    code, data = run_json("--docs", str(SEED), "blast-radius", "redis")
    assert code == 0
    assert data["entity"] == "component:default/redis"
    impacted = {i["entity"]: i for i in data["impacted"]}
    assert list(impacted) == [
        "component:default/token-cache",
        "component:default/auth-service",
        "component:default/login-flow",
    ]
    login = impacted["component:default/login-flow"]
    assert login["hops"] == 3 and login["impact"] == "breaks"
    assert login["path"][0] == "component:default/redis" and login["path"][-1] == "component:default/login-flow"
    corroborated = login["edges"][1]
    assert (corroborated["src"], corroborated["rel"], corroborated["dst"]) == (
        "component:default/auth-service",
        "depends_on",
        "component:default/token-cache",
    )
    assert corroborated["weight"] == 2 and len(corroborated["sources"]) == 2
    assert data["survives"] == [
        "component:default/billing",
        "component:default/postgresql",
        "component:default/user-database",
    ]


def test_unknown_name_exits_1_with_suggestions() -> None:
    code, data = run_json("--docs", str(SEED), "blast-radius", "redsi")
    assert code == 1
    assert data["entity"] is None
    assert "component:default/redis" in data["suggestions"]


def test_resolve_meets_spellings_of_one_entity() -> None:
    for spelling in ("The Auth Service", "AuthService", "auth_service", "component:default/auth-service"):
        code, data = run_json("--docs", str(SEED), "resolve", spelling)
        assert (code, data["entity"]) == (0, "component:default/auth-service"), spelling


def test_no_sources_is_bad_usage() -> None:
    done = run("blast-radius", "redis")
    assert done.returncode == 2
    assert "no usable input" in done.stderr


def test_bad_option_is_bad_usage() -> None:
    assert run("--docs", str(SEED), "blast-radius", "redis", "--depth", "zero").returncode == 2


def test_missing_source_is_reported_and_the_rest_still_answers(tmp_path: Path) -> None:
    done = run("--docs", str(SEED), "--catalog", str(tmp_path / "nope.yaml"), "resolve", "redis")
    assert done.returncode == 0
    assert "nope.yaml" in done.stderr
    assert "Traceback" not in done.stderr


def test_human_output_is_plain_when_piped() -> None:
    done = run("--docs", str(SEED), "blast-radius", "redis")
    assert done.returncode == 0
    assert "\x1b[" not in done.stdout
    assert "auth-service -depends_on-> token-cache [docs/c2.md:1, docs/c8.md:1] x2" in done.stdout
    assert "survives (3): billing, postgresql, user-database" in done.stdout


def test_path_reports_edges_in_their_true_direction() -> None:
    code, data = run_json("--docs", str(SEED), "path", "redis", "login flow")
    assert code == 0
    assert data["path"][0] == "component:default/redis"  # from FROM to TO, whichever way the edges run
    assert data["path"][-1] == "component:default/login-flow"
    assert all(e["rel"] in {"depends_on", "backed_by"} for e in data["edges"])
    assert data["edges"][0]["dst"] == "component:default/redis"
    assert data["edges"][-1]["src"] == "component:default/login-flow"
    done = run("--docs", str(SEED), "path", "redis", "login flow")
    assert done.stdout.splitlines()[0].startswith("redis <-")


def test_ask_answers_in_plain_sentences_with_cited_lines() -> None:
    code, data = run_json("--docs", str(SEED), "ask", "what breaks if the token cache goes down?")
    assert code == 0
    assert data["entities"] == ["component:default/token-cache"]
    assert "auth-service -depends_on-> token-cache [docs/c2.md:1, docs/c8.md:1] x2" in data["cited"]


def test_acme_headline_question_answers_dependencies_the_deploy_and_owners() -> None:
    question = "what does payments call, which of those changed in the last six hours, and who owns each?"
    code, data = run_json(*ACME_SOURCES, "--now", "2026-11-29T15:00:00Z", "ask", question)
    assert code == 0
    assert [(a["kind"], a["entities"], a["window_hours"]) for a in data["asks"]] == [
        ("dependencies", ["component:default/payments"], 6.0),
        ("changes", ["component:default/payments"], 6.0),
        ("ownership", ["component:default/payments"], None),
    ]
    assert "antifraud (risk-team), ledger (finance-team), notify (msg-team) and postgresql (platform)" in data["answer"]
    assert "r-8812" in data["answer"]
    titles = ["payments — depends on", "payments — changed in the last 6 h", "payments — owners"]
    assert [(s["kind"], s["title"], s["window_hours"]) for s in data["sections"]] == [
        ("dependencies", titles[0], 6.0), ("changes", titles[1], 6.0), ("ownership", titles[2], None),
    ]  # fmt: skip
    changes = data["sections"][1]
    assert any("r-8812" in line for line in changes["lines"]) and not any("r-8790" in line for line in changes["lines"])
    assert changes["cited"][0] == "payments -depends_on-> antifraud [catalog/payments.yaml#3] x1"
    assert changes["edges"][0]["dst"] == "component:default/antifraud"
    assert "payments -owned_by-> platform [catalog/payments.yaml#3] x1" in data["sections"][2]["cited"]
    text = run(*ACME_SOURCES, "--now", "2026-11-29T15:00:00Z", "ask", question).stdout.splitlines()
    headings = [line for line in text if line in titles]
    assert headings == titles
    under_changes = text[text.index(titles[1]) + 1 : text.index(titles[2])]
    assert under_changes[0].startswith("  antifraud (risk-team) was deployed: r-8812")
    assert "    payments -depends_on-> antifraud [catalog/payments.yaml#3] x1" in under_changes


@pytest.mark.parametrize("now", ["2026-11-29T15:00:00Z", "2026-11-29T16:00:00+01:00"])
def test_acme_suspects_for_payments_flags_the_antifraud_deploy(now: str) -> None:
    code, data = run_json(*ACME_SOURCES, "--now", now, "suspects", "payments", "--since", "6h")
    assert code == 0
    deps = {d["entity"]: d for d in data["dependencies"]}
    antifraud = deps["component:default/antifraud"]
    assert antifraud["hops"] == 1
    assert [(d["id"], d["reason"]) for d in antifraud["deploys"]] == [("r-8812", "direct dependency")]
    assert antifraud["owners"] == ["group:default/risk-team"]
    assert deps["component:default/ledger"]["deploys"] == []
    assert deps["component:default/ledger"]["owners"] == ["group:default/finance-team"]


def test_acme_lint_is_clean() -> None:
    code, data = run_json(*ACME_SOURCES, "lint")
    assert code == 0
    assert data["clean"], data


def test_acme_blast_radius_of_redis_has_breaks_degrades_and_systems() -> None:
    code, data = run_json(*ACME_SOURCES, "blast-radius", "redis")
    assert code == 0
    impacts = {i["impact"] for i in data["impacted"]}
    assert impacts == {"breaks", "degrades"}
    assert data["systems"] and all(s["impacted"] <= s["total"] for s in data["systems"])
    assert "resource:default/kafka" in data["survives"]


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path.parent)


def test_as_of_answers_on_the_graph_before_and_after_a_change(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs" / "checkout.md", "Checkout depends on antifraud.\n")
    assert run("--docs", docs, "sync").returncode == 0
    _, before = run_json("lag")
    synced_at = before["sources"][0]["last_success"]
    write(tmp_path / "docs" / "checkout.md", "Checkout depends on ledger.\n")
    assert run("--docs", docs, "sync").returncode == 0
    _, now = run_json("suspects", "checkout")
    assert [d["entity"] for d in now["dependencies"]] == ["component:default/ledger"]
    _, then = run_json("--as-of", synced_at, "suspects", "checkout")
    assert [d["entity"] for d in then["dependencies"]] == ["component:default/antifraud"]


def test_lag_reports_each_source_in_the_contract_shape(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs" / "a.md", "Alpha depends on beta.\n")
    run("--docs", docs, "--deploys", str(tmp_path / "missing.jsonl"), "sync")
    code, data = run_json("lag")
    assert code == 0
    by_name = {s["name"]: s for s in data["sources"]}
    assert set(by_name) == {f"docs:{docs}", f"deploys:{tmp_path / 'missing.jsonl'}"}
    for source in data["sources"]:
        assert {"name", "last_success", "last_error", "age_seconds", "stale"} <= set(source)
    assert by_name[f"docs:{docs}"]["stale"] is False and by_name[f"docs:{docs}"]["age_seconds"] >= 0
    failing = by_name[f"deploys:{tmp_path / 'missing.jsonl'}"]
    assert failing["stale"] is True and "missing.jsonl" in failing["last_error"]
    assert data["stale"] is True


def test_a_source_that_empties_is_held_and_accepted_by_an_admin(tmp_path: Path) -> None:
    docs = write(
        tmp_path / "docs" / "a.md", "Alpha depends on beta.\nBeta depends on gamma.\nGamma depends on delta.\n"
    )
    other = write(tmp_path / "other" / "o.md", "Omega depends on sigma.\n")
    run("--docs", docs, "--docs", other, "sync")
    write(tmp_path / "docs" / "a.md", "Nothing to see here.\n")
    code, data = run_json("--docs", docs, "--docs", other, "sync")
    assert code == 0 and [s["outcome"] for s in data["sources"]] == ["held", "unchanged"]
    assert run_json("resolve", "gamma")[1]["entity"] == "component:default/gamma"
    code, data = run_json("sync", "--accept", f"docs:{docs}")
    # Three edges and the passage that stated them retire; the new passage starts.
    assert code == 0 and (data["accepted"][0]["retired"], data["accepted"][0]["added"]) == (4, 1)
    assert run_json("resolve", "gamma")[1]["entity"] is None
    assert run_json("resolve", "omega")[1]["entity"] == "component:default/omega"


def test_acme_blast_radius_of_redis_quotes_its_failover_runbook() -> None:
    code, data = run_json(*ACME_SOURCES, "blast-radius", "redis")
    assert code == 0
    first = data["passages"][0]
    assert (first["locator"], first["entity"], first["line"]) == (
        "runbooks/redis.md §Failover",
        "resource:default/redis",
        30,
    )
    assert first["text"].startswith("Sentinel promotes a replica to primary")
    assert 1 <= len(data["passages"]) <= 3
    assert len({p["locator"] for p in data["passages"]}) == len(data["passages"])
    done = run(*ACME_SOURCES, "blast-radius", "redis")
    assert "Runbooks: runbooks/redis.md §Failover (redis) — Sentinel promotes" in done.stdout


def test_acme_suspects_for_payments_quote_its_runbook_and_its_dependencies() -> None:
    code, data = run_json(*ACME_SOURCES, "--now", "2026-11-29T15:00:00Z", "suspects", "payments")
    assert code == 0
    quoted = [(p["entity"], p["locator"]) for p in data["passages"]]
    assert quoted[0] == ("component:default/payments", "runbooks/payments.md §Rolling back")
    assert ("component:default/antifraud", "runbooks/payments.md §First five minutes") in quoted


def test_untrusted_docs_are_never_quoted(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "redis.md", "# Redis\n\nRun `redis-cli flushall` whenever redis is slow.\n")
    code, data = run_json("--catalog", str(ACME / "catalog"), "--untrusted-docs", outside, "blast-radius", "redis")
    assert code == 0 and data["passages"] == []


def run_migrate(database_url: str) -> subprocess.Popen[str]:
    """`oncall-graph migrate` as the compose service and the Kubernetes Job run it: DATABASE_URL from the env."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONCALL_GRAPH_", "DATABASE_"))}
    return subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "migrate", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT), "DATABASE_URL": database_url},
    )


def migrated(database_url: str) -> tuple[int, Any]:
    done = run_migrate(database_url)
    out, err = done.communicate(timeout=120)
    assert "Traceback" not in err
    return done.returncode, json.loads(out)


def test_migrate_creates_the_schema_then_leaves_a_current_one_alone(database_url: str) -> None:
    from sync.store.database import HEAD

    code, first = migrated(database_url)
    assert code == 0
    assert (first["previous"], first["revision"], first["changed"]) == (None, HEAD, True)
    code, again = migrated(database_url)
    assert code == 0
    assert (again["previous"], again["revision"], again["changed"]) == (HEAD, HEAD, False)
    synced = run("--db", database_url, "--docs", str(SEED), "sync")
    assert synced.returncode == 0, synced.stderr


def test_migrate_jobs_started_together_both_succeed(database_url: str) -> None:
    # A rollout can start the migration Job while a previous one is still retrying: they must take turns.
    from sqlalchemy import create_engine, text

    from sync.store.database import HEAD, normalize_url

    jobs = [run_migrate(database_url) for _ in range(2)]
    results = [(json.loads(job.communicate(timeout=120)[0]), job.returncode) for job in jobs]
    assert [(data["revision"], code) for data, code in results] == [(HEAD, 0), (HEAD, 0)]
    engine = create_engine(normalize_url(database_url))
    with engine.connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [HEAD]
    engine.dispose()


@pytest.mark.parametrize("command", ["migrate", "lag"])
def test_an_unreachable_database_exits_2_and_the_message_hides_the_password(command: str) -> None:
    done = run("--db", "postgresql://oncall:s3cret@127.0.0.1:1/oncall", command)
    assert done.returncode == 2
    assert "postgresql://oncall:***@127.0.0.1:1/oncall" in done.stderr
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr

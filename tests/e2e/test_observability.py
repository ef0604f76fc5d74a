"""Observability of the running bot: /metrics scraped over HTTP, JSON log lines, OTLP trace export."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bot.telemetry.tracing import STAGE, STAGES
from tests.e2e.conftest import Bot, _env, stop
from tests.e2e.test_slack_bot import mention, only_response, pagerduty_alert
from tests.fakes.otlp_receiver import ReceivedSpan, otlp_receiver
from tests.fakes.slack_api import FakeSlack

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(bot: Bot) -> Samples:
    response = httpx.get(f"{bot.url}/metrics", timeout=5)
    assert response.status_code == 200
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, metric: str, /, **labels: str) -> float | None:
    return samples.get((metric, frozenset(labels.items())))


def labelled(samples: Samples, name: str, label: str) -> dict[str, float]:
    """{label value: sample value} for every sample of `name`."""
    return {dict(key)[label]: v for (n, key), v in samples.items() if n == name and label in dict(key)}


def scrape_until(bot: Bot, ready: Callable[[Samples], bool], timeout: float = 20) -> Samples:
    """Handlers record their latency just after the reply goes out: scrape until it shows."""
    deadline = time.monotonic() + timeout
    while True:
        samples = scrape(bot)
        if ready(samples) or time.monotonic() > deadline:
            return samples
        time.sleep(0.1)


def test_metrics_count_syncs_queries_unresolved_names_and_repeats_with_their_labels(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(ONCALL_GRAPH_LOG_FORMAT="json")
    bot.command("/blast-radius", "redis", fake_slack.response_url("b1"))
    bot.command("/suspects", "payments 6h", fake_slack.response_url("s1"))
    bot.command("/blast-radius", "The Flux Capacitor", fake_slack.response_url("u1"))
    for name in ("b1", "s1", "u1"):
        only_response(fake_slack, name)
    bot.event(mention("1700000000.000100"), event_id="Ev1")
    bot.event(mention("1700000000.000100"), event_id="Ev1", **{"X-Slack-Retry-Num": "1"})
    bot.event(pagerduty_alert("1700000100.000200"), event_id="EvA1")
    fake_slack.wait_for(lambda: len(fake_slack.posted("chat.postMessage")) == 2, timeout=20)

    def settled(s: Samples) -> bool:
        return (
            value(s, "oncall_graph_query_seconds_count", command="blast-radius") == 2
            and value(s, "oncall_graph_query_seconds_count", command="mention") == 1
            and value(s, "oncall_graph_query_seconds_count", command="alert") == 1
            and bool(labelled(s, "oncall_graph_sync_results_total", "source"))
        )

    samples = scrape_until(bot, settled)
    assert value(samples, "oncall_graph_query_seconds_count", command="blast-radius") == 2
    assert value(samples, "oncall_graph_query_seconds_count", command="suspects") == 1
    assert value(samples, "oncall_graph_query_seconds_count", command="mention") == 1
    assert value(samples, "oncall_graph_slack_requests_total", kind="blast-radius") == 2
    assert value(samples, "oncall_graph_slack_requests_total", kind="mention") == 1
    assert value(samples, "oncall_graph_query_seconds_count", command="alert") == 1
    assert value(samples, "oncall_graph_slack_requests_total", kind="alert") == 1
    assert value(samples, "oncall_graph_slack_deduplicated_total", kind="retry") == 1
    assert value(samples, "oncall_graph_unresolved_names_total", command="blast-radius") == 1
    # The name typed is never a label (unbounded, and maybe about a hidden entity): it is in the log.
    assert not any("flux" in str(key).lower() for (_, key) in samples), "a typed name reached /metrics"

    # The first sync: every source applied once, each with a duration; all four have an age now.
    results = {dict(key)["source"].split(":")[0]: dict(key)["outcome"]
               for (n, key), v in samples.items() if n == "oncall_graph_sync_results_total" and v}  # fmt: skip
    assert results == {"catalog": "applied", "deploys": "applied", "docs": "applied", "aliases": "applied"}
    durations = labelled(samples, "oncall_graph_sync_seconds_count", "source")
    assert sorted(s.split(":")[0] for s in durations) == ["aliases", "catalog", "deploys", "docs"]
    ages = labelled(samples, "oncall_graph_source_age_seconds", "source")
    assert set(ages) == set(durations) and all(0 <= age < 120 for age in ages.values())
    assert set(labelled(samples, "oncall_graph_source_stale", "source").values()) == {0.0}
    assert (value(samples, "oncall_graph_entities") or 0) > 20 and (value(samples, "oncall_graph_edges") or 0) > 20
    assert value(samples, "oncall_graph_retired_edges") == 0

    lines = [json.loads(line) for line in bot.output().splitlines() if line.strip()]  # every line is JSON
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    answered = [line for line in lines if line.get("command") == "blast-radius" and "query" in line]
    redis = next(line for line in answered if line["query"] == "redis")
    assert redis["entity"] == "resource:default/redis" and redis["impacted"] > 3
    assert isinstance(redis["duration"], float) and redis["level"] == "INFO"
    missed = next(line for line in answered if line["query"] == "The Flux Capacitor")
    assert missed["entity"] is None and missed["entities"] == []
    unresolved = [line for line in lines if "unresolved" in line]
    assert [(u["command"], u["unresolved"]) for u in unresolved] == [("blast-radius", "flux capacitor")]
    synced = [line for line in lines if line.get("source", "").startswith("catalog:")]
    assert synced and synced[0]["outcome"] == "applied" and isinstance(synced[0]["duration"], float)


def test_a_blast_radius_query_its_stages_and_a_sync_arrive_as_spans_at_the_otlp_endpoint(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    with otlp_receiver() as receiver:
        bot = bot_factory(
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_BSP_SCHEDULE_DELAY="100", OTEL_SERVICE_NAME="og-e2e"
        )
        bot.command("/blast-radius", "redis", fake_slack.response_url("t1"))
        only_response(fake_slack, "t1")
        receiver.wait_for(lambda: receiver.named("oncall-graph blast-radius"))
        receiver.wait_for(lambda: receiver.named("oncall-graph settlement"))
        receiver.wait_for(lambda: receiver.named("oncall-graph sync"))
        stop(bot)  # before the receiver goes away, so the last flush has somewhere to go
    [query] = receiver.named("oncall-graph blast-radius")
    attributes: dict[str, Any] = query.attributes
    assert attributes["oncall_graph.entities"] == ["resource:default/redis"]
    assert attributes["oncall_graph.resolved"] is True
    assert attributes["oncall_graph.query.text"] == "redis"
    assert attributes["oncall_graph.impacted_count"] > 3
    assert query.resource["service.name"] == "og-e2e"
    sync = receiver.named("oncall-graph sync")[0]
    outcomes = {e[1]["oncall_graph.source"].split(":")[0]: e[1]["oncall_graph.outcome"] for e in sync.events}
    assert outcomes == {"catalog": "applied", "deploys": "applied", "docs": "applied", "aliases": "applied"}
    assert sync.attributes["oncall_graph.entities_count"] > 20
    check_stages(receiver.spans, query)


def check_stages(spans: list[ReceivedSpan], query: ReceivedSpan) -> None:
    """Every stage of the answer is a span of its own in the answer's one trace, under its request,
    in the order the stages run."""
    trace = [s for s in spans if s.trace_id == query.trace_id]
    [request] = [s for s in trace if s.name == "oncall-graph slack request"]
    assert request.parent_id == "" and query.start_ns >= request.start_ns
    by_id = {s.span_id: s for s in trace}

    def under_request(span: ReceivedSpan) -> bool:
        while span.parent_id in by_id:
            span = by_id[span.parent_id]
        return span is request

    stages = {s.attributes[STAGE]: s for s in trace if STAGE in s.attributes and s.name != "oncall-graph slot"}
    assert set(stages) == set(STAGES) - {"slot"}
    assert [s.attributes[STAGE] for s in trace if s.name == "oncall-graph slot"] == ["slot", "slot"]
    assert all(under_request(s) and s.end_ns >= s.start_ns for s in trace)
    for stage in ("resolution", "freshness", "walk", "passages", "rendering"):
        assert stages[stage].parent_id == query.span_id, stage  # inside the answer's own span
    # A slash command's claim is written while its answer is computed: its stage, the wait for that
    # write, comes after the rendering and before the post.
    starts = [stages[name].start_ns for name in STAGES if name not in ("slot", "claim")]
    assert starts == sorted(starts)
    assert stages["rendering"].end_ns <= stages["claim"].start_ns <= stages["post"].start_ns


def test_an_unknown_log_format_stops_serve_with_a_message_naming_the_setting(tmp_path: Path) -> None:
    env = _env(ONCALL_GRAPH_LOG_FORMAT="xml", PORT="0", DATABASE_URL=f"sqlite:///{tmp_path / 'graph.db'}")
    done = subprocess.run([sys.executable, "-m", "bot.cli", "serve"], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert "ONCALL_GRAPH_LOG_FORMAT must be one of text, json; got 'xml'" in done.stderr
    assert "Traceback" not in done.stderr

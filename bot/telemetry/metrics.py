"""Prometheus metrics of the bot, on one registry per process (served at /metrics)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from bot.telemetry.source_metrics import SourceAgeCollector
from bot.telemetry.unresolved_names import UnresolvedNames
from graph.health.freshness import LagReport


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.requests = Counter(
            "oncall_graph_slack_requests", "Slack commands and events handled", ["kind"], registry=r
        )
        self.deduplicated = Counter(
            "oncall_graph_slack_deduplicated", "Slack deliveries skipped as repeats", ["kind"], registry=r
        )
        # Answers' posts to Slack (bot/slack/retrying): retried after a failure, and given up on, by
        # what was posted and why (Slack's error code, http_<status>, or the exception's name).
        self.post_retries = Counter(
            "oncall_graph_slack_post_retries", "Posts to Slack retried after a failure", ["what", "reason"], registry=r
        )
        self.post_failures = Counter(
            "oncall_graph_slack_post_failures", "Posts to Slack given up on", ["what", "reason"], registry=r
        )
        self.unresolved = Counter(
            "oncall_graph_unresolved_names", "Names that did not resolve to an entity", ["command"], registry=r
        )
        self.refused = Counter("oncall_graph_refused", "Admin commands refused to non-admins", ["command"], registry=r)
        self.latency = Histogram(
            "oncall_graph_query_seconds",
            "Time from request to answer posted",
            ["command"],
            buckets=(0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=r,
        )
        self.pagerduty_webhooks = Counter(
            "oncall_graph_pagerduty_webhooks", "PagerDuty webhooks by outcome", ["outcome"], registry=r
        )
        self.webhook_refusals = Counter(
            "oncall_graph_webhook_refusals",
            "Deploy webhook deliveries refused before they proved their sender, by push source and status",
            ["source", "status"],
            registry=r,
        )
        self.sync_seconds = Histogram(
            "oncall_graph_sync_seconds",
            "Time to read and store one source in a sync",
            ["source"],
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
            registry=r,
        )
        self.sync_results = Counter(
            "oncall_graph_sync_results", "Source syncs by outcome", ["source", "outcome"], registry=r
        )
        self.snapshot_updates = Counter(
            "oncall_graph_snapshot_updates",
            "Snapshots brought to the stored graph version, by how: deploy delta, rebuild from every fact, image",
            ["how"],
            registry=r,
        )
        self.snapshot_update_seconds = Histogram(
            "oncall_graph_snapshot_update_seconds",
            "Time to bring the snapshot to the stored graph version, by how",
            ["how"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
        self.entities = Gauge("oncall_graph_entities", "Entities in the graph served", registry=r)
        self.edges = Gauge("oncall_graph_edges", "Edges in the graph served", registry=r)
        self.retired_edges = Gauge(
            "oncall_graph_retired_edges", "Edge facts retired over the stored history", registry=r
        )
        # Never by name: see bot/telemetry/unresolved_names.py. No label here takes text a user typed.
        self.unresolved_names = UnresolvedNames()
        self.model_calls = Counter(
            "oncall_graph_model_calls", "Calls to the optional language model", ["purpose", "outcome"], registry=r
        )
        self.model_tokens = Counter(
            "oncall_graph_model_tokens", "Tokens sent to and received from the model", ["purpose", "direction"],
            registry=r,
        )  # fmt: skip
        self.model_seconds = Histogram(
            "oncall_graph_model_seconds",
            "Time of one model call",
            ["purpose"],
            buckets=(0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 20),
            registry=r,
        )
        self.model_fallbacks = Counter(
            "oncall_graph_model_fallbacks", "Answers posted as the graph's own because the model's could not be used",
            ["reason"], registry=r,
        )  # fmt: skip

    def unresolved_name(self, command: str, name: str) -> None:
        """Count a name that did not resolve, by command, and log it (rate-limited). A name hidden from
        the asker is counted and logged exactly like one that names nothing."""
        self.unresolved.labels(command).inc()
        self.unresolved_names.note(command, name)

    def watch_sources(self, lag: Callable[[], LagReport]) -> None:
        """Serve each source's age and staleness, read at every scrape."""
        self.registry.register(SourceAgeCollector(lag))

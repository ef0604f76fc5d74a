"""Prometheus metrics of the bot, on one registry per process (served at /metrics)."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram


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

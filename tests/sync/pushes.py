"""Pushed deploys stored straight into the store, for tests and benchmarks that need thousands of steps."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime

from sync.push import PushIntake
from sync.sources.deploys import parse_deploys
from sync.store.fact_store import Store
from sync.store.pushed import Delivery, store_deliveries


def push_steps(store: Store, clock: Callable[[], datetime], events: Iterable[dict[str, str]]) -> None:
    """Each native deploy event its own delivery and version step, stored as the intake would but
    without its 50 ms pacing (thousands of steps in seconds); the push source registered first."""
    source = PushIntake(store, clock, refresh=None).open("deploys")
    for event in events:
        deploys = parse_deploys(source, f"event {event['id']}", json.dumps(event)).deploys
        assert store_deliveries(store, source, [Delivery(deploys, clock(), event["id"])])[0].added, event

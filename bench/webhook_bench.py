"""Webhook benchmark: a deploy POSTed to /webhooks/deploys until `/suspects` shows it, on the replica
that took it and on a follower, two `oncall-graph serve` on one PostgreSQL.

    python -m bench.webhook_bench            layered-10k and layered-100k
    python -m bench.webhook_bench --quick    layered-10k only

Each sample posts a signed native event for a service of its own (`svc-N`, so that the new deploy
is never cut from a list of earlier ones), then asks `/suspects svc-N`
(signed Slack request, answer at a fake Slack API) on both replicas until each shows it; the
figure is the time from the POST to the first answer that shows it. The follower is woken by the
version's NOTIFY (`sync/version_watch.py`) and joins the deploy as a delta read from the store; its
poll (ONCALL_GRAPH_POLL_INTERVAL) is set to 60 s here, so only the wake can explain a figure under it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bench.generate import OUT
from bench.measure import summary_ms
from bench.replicas import shown_after, synced_scenarios, two_replicas
from bench.sync_bench import scenario_names
from tests.e2e.conftest import Bot
from tests.e2e.webhook_posts import DEPLOY_SECRET, native
from tests.fakes.slack_api import FakeSlack, slack_api

SAMPLES = {"layered-10k": 20, "layered-100k": 10}


def measure(leader: Bot, follower: Bot, fake: FakeSlack, samples: int) -> dict[str, Any]:
    same, other, accepted = [], [], []
    for n in range(samples):
        service = f"svc-{n}"
        deploy_id = f"bench-{uuid.uuid4().hex[:10]}"
        event = {
            "id": deploy_id,
            "service": service,
            "version": f"v{n}",
            "deployed_at": datetime.now(UTC).isoformat(),
        }  # fmt: skip
        posted = time.perf_counter()
        answer = native(leader, json.dumps(event).encode(), secret=DEPLOY_SECRET)
        accepted.append(time.perf_counter() - posted)
        if answer.status_code != 202:
            raise RuntimeError(f"POST /webhooks/deploys: HTTP {answer.status_code} {answer.text}")
        same.append(shown_after(leader, fake, service, deploy_id, posted))
        other.append(shown_after(follower, fake, service, deploy_id, posted))
    return {"accepted_202": summary_ms(accepted), "same_replica": summary_ms(same), "follower": summary_ms(other)}


def main(argv: Sequence[str] | None = None) -> None:
    names = scenario_names(argv, __doc__ or "")
    results: dict[str, Any] = {}
    for name, catalog, db, scratch in synced_scenarios(names, "bench_webhook"):
        with slack_api() as fake, two_replicas(catalog, db, fake, scratch) as (leader, follower):
            results[name] = measure(leader, follower, fake, SAMPLES[name])
        for label, figures in results[name].items():
            print(f"{name:>13} webhook -> {label:>13}: p50 {figures['p50']:7.0f} ms  p99 {figures['p99']:7.0f} ms")
    OUT.mkdir(exist_ok=True)
    (OUT / "webhook_results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

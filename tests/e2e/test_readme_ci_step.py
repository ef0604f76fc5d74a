"""The README's CI step, run as written (bash, openssl, curl) against the running bot."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable

from tests.e2e.conftest import ROOT, Bot
from tests.e2e.webhook_posts import DEPLOY_SECRET, suspects_until
from tests.fakes.slack_api import FakeSlack


def readme_ci_step() -> str:
    readme = (ROOT / "README.md").read_text()
    after = readme.split("A CI step, after the deploy", 1)[1]
    return after.split("```sh\n", 1)[1].split("```", 1)[0]


def test_the_readme_ci_step_posts_a_signed_deploy_that_suspects_shows(
    bot_factory: Callable[..., Bot], fake_slack: FakeSlack
) -> None:
    bot = bot_factory(ONCALL_GRAPH_DEPLOY_WEBHOOK_SECRETS=DEPLOY_SECRET)
    deploy_id = f"ci-{uuid.uuid4().hex[:8]}"
    step = {
        "ONCALL_GRAPH_URL": bot.url, "ONCALL_GRAPH_DEPLOY_SECRET": DEPLOY_SECRET, "DEPLOY_ID": deploy_id,
        "SERVICE": "antifraud", "VERSION": "v2.4.0", "ACTOR": "ci-bot", "RUN_URL": "https://ci.example.com/runs/1",
        "REPOSITORY": "acme/antifraud",
    }  # fmt: skip
    ran = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_ci_step()], env={"PATH": os.environ["PATH"], **step},
                         capture_output=True, text=True, timeout=30)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert '"status":"accepted"' in ran.stdout.replace(" ", "")
    assert deploy_id in suspects_until(bot, fake_slack, deploy_id)

    wrong = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_ci_step()],
                           env={"PATH": os.environ["PATH"], **step, "ONCALL_GRAPH_DEPLOY_SECRET": "not-the-secret"},
                           capture_output=True, text=True, timeout=30)  # fmt: skip
    assert wrong.returncode != 0 and "401" in wrong.stderr

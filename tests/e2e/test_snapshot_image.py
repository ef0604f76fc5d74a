"""The snapshot image across real restarts of `oncall-graph serve`: killed mid-write, corrupt, stale,
two replicas starting together; on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.e2e.conftest import Bot, _env, start_bot, stop, write_sources
from tests.e2e.test_slack_bot import text_of
from tests.fakes.slack_api import FakeSlack

WROTE = "wrote the image of graph version"


def sync(database_url: str, sources: dict[str, str]) -> None:
    """The real command line syncs the sources into the database (the bots then start on it)."""
    flags = ["--catalog", sources["ONCALL_GRAPH_CATALOG"], "--deploys", sources["ONCALL_GRAPH_DEPLOYS"]]
    subprocess.run([sys.executable, "-m", "bot.cli", "--db", database_url, *flags, "sync"], env=_env(), check=True,
                   capture_output=True)  # fmt: skip


def serve(log: Path, fake: FakeSlack, database_url: str, images: Path, **extra: str) -> Bot:
    return start_bot(log, PORT="0", SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET="test-signing-secret",
                     SLACK_API_URL=fake.url, DATABASE_URL=database_url, ONCALL_GRAPH_SYNC_INTERVAL="3600",
                     ONCALL_GRAPH_SNAPSHOT_DIR=str(images), **extra)  # fmt: skip


def wait_for(check: object, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def blast(bot: Bot, fake: FakeSlack, name: str) -> str:
    bot.command("/blast-radius", "redis", fake.response_url(name))
    fake.wait_for(lambda: fake.responses(name), timeout=30)
    return text_of(fake.responses(name)[0])


def size(bot: Bot) -> tuple[int, int]:
    health = httpx.get(f"{bot.url}/healthz", timeout=5).json()
    return health["entities"], health["edges"]


def image_of(images: Path) -> Path:
    [image] = list(images.glob("*.snapshot"))
    return image


def test_killed_mid_write_corrupt_and_stale_images_are_rebuilt(
    tmp_path: Path, fake_slack: FakeSlack, database_url: str
) -> None:
    sources = write_sources(tmp_path / "sources")
    sync(database_url, sources)
    images = tmp_path / "images"

    # Killed while the image is half written: only its temporary file exists.
    slow = serve(tmp_path / "slow.log", fake_slack, database_url, images, ONCALL_GRAPH_TEST_IMAGE_WRITE_PAUSE="1")
    built = size(slow)
    first = blast(slow, fake_slack, "built")
    wait_for(lambda: list(images.glob(".*.tmp")), "the temporary image file")
    slow.proc.kill()
    slow.proc.wait()
    stop(slow)
    assert not list(images.glob("*.snapshot")), "a half-written image was renamed into place"

    again = serve(tmp_path / "again.log", fake_slack, database_url, images)
    assert "not used (no image yet)" in again.output()
    assert size(again) == built
    assert "cart" in first and "cart" in blast(again, fake_slack, "again")
    wait_for(lambda: WROTE in again.output(), "the image written")
    assert not list(images.glob(".*.tmp")), "the killed writer's temporary file was left behind"
    stop(again)

    # A valid image is loaded, not rebuilt.
    loaded = serve(tmp_path / "loaded.log", fake_slack, database_url, images)
    assert "from its image" in loaded.output() and WROTE not in loaded.output()
    assert size(loaded) == built
    assert "cart" in blast(loaded, fake_slack, "loaded")
    stop(loaded)

    # One flipped byte in the payload: detected, rebuilt from the facts, logged, rewritten.
    image = image_of(images)
    data = bytearray(image.read_bytes())
    data[len(data) // 2] ^= 0x01
    image.write_bytes(bytes(data))
    corrupt = serve(tmp_path / "corrupt.log", fake_slack, database_url, images)
    assert "checksum mismatch (corrupt)" in corrupt.output()
    assert size(corrupt) == built
    wait_for(lambda: WROTE in corrupt.output(), "the image rewritten")
    stop(corrupt)

    # Another graph version (a catalog change synced by another process): the image is stale.
    extra = Path(sources["ONCALL_GRAPH_CATALOG"]) / "extra.yaml"
    extra.write_text(
        "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: cache-warmer}\n"
        "spec: {type: service, lifecycle: production, owner: group:sre, dependsOn: ['resource:redis']}\n"
    )  # fmt: skip
    sync(database_url, sources)
    stale = serve(tmp_path / "stale.log", fake_slack, database_url, images)
    assert "not used (stale: graph_moved" in stale.output()
    assert size(stale)[0] == built[0] + 1
    assert "cache-warmer" in blast(stale, fake_slack, "stale")
    stop(stale)


def test_two_replicas_starting_together_write_the_image_once(
    tmp_path: Path, fake_slack: FakeSlack, database_url: str
) -> None:
    sync(database_url, write_sources(tmp_path / "sources"))
    images = tmp_path / "images"
    # Slow writes, so the two writes would overlap if both were attempted.
    env = {"ONCALL_GRAPH_TEST_IMAGE_WRITE_PAUSE": "0.2"}
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    bots: list[Bot] = []
    try:
        with ThreadPoolExecutor(2) as pool:
            bots = list(pool.map(lambda log: serve(log, fake_slack, database_url, images, **env), logs))
        wait_for(lambda: sum(b.output().count(WROTE) for b in bots) >= 1, "one image written")
        time.sleep(3)  # time for a second write, were one attempted
        outputs = [b.output() for b in bots]
        assert sum(o.count(WROTE) for o in outputs) == 1, outputs
        assert all("not used (no image yet)" in o for o in outputs)
        assert len(list(images.glob("*.snapshot"))) == 1
    finally:
        for bot in bots:
            stop(bot)

"""A throwaway PostgreSQL cluster for the test session: a real server on a free loopback port.

Uses ONCALL_GRAPH_TEST_DATABASE_URL when CI already started one; otherwise initdb + pg_ctl from
Debian's postgresql package (installed by .ci/run), run as the `postgres` user when we are root.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

ENV_URL = "ONCALL_GRAPH_TEST_DATABASE_URL"


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql (.ci/run does this)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """Yields an admin URL (database `postgres`) and stops the cluster afterwards."""
    if os.environ.get(ENV_URL):
        yield os.environ[ENV_URL]
        return
    pg = _pg_bin()
    home = Path(tempfile.mkdtemp(prefix="oncall-pg-"))
    if os.geteuid() == 0:
        shutil.chown(home, "postgres", "postgres")
    data, port = home / "data", _free_port()
    subprocess.run(_as_postgres([str(pg / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
                   check=True, capture_output=True)  # fmt: skip
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(
        _as_postgres([str(pg / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(home / "log"), "-w", "start"]),
        check=True, capture_output=True,
    )  # fmt: skip
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_postgres([str(pg / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True)  # fmt: skip
        shutil.rmtree(home, ignore_errors=True)


def create_database(admin_url: str, name: str) -> str:
    """A fresh empty database; returns its SQLAlchemy URL."""
    dsn = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}"

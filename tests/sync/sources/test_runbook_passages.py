"""Runbooks cut into passages: paragraphs and list blocks under their headings, code kept whole."""

from __future__ import annotations

from pathlib import Path

from graph.facts import Passage
from sync.sources.runbook_passages import MAX_CHARS, split_passages
from sync.sources.runbooks import parse_runbook, read_runbooks

SOURCE = "docs:runbooks"


def split(text: str, name: str = "docs/redis.md") -> list[Passage]:
    return list(split_passages(SOURCE, name, text))


def located(passages: list[Passage]) -> list[tuple[str, int, str]]:
    return [(p.locator, p.line, p.text) for p in passages]


def test_each_paragraph_and_list_is_a_passage_cited_by_its_nearest_heading() -> None:
    text = (
        "# Redis runbook\n"
        "\n"
        "Owner: SRE.\n"
        "\n"
        "## Failover\n"
        "\n"
        "Sentinel promotes a replica.\n"
        "Clients reconnect by themselves.\n"
        "\n"
        "- check the sentinels\n"
        "- check the clients\n"
        "\n"
        "### By hand\n"
        "\n"
        "Run the failover command.\n"
    )
    assert located(split(text)) == [
        ("docs/redis.md §Redis runbook", 3, "Owner: SRE."),
        ("docs/redis.md §Failover", 7, "Sentinel promotes a replica.\nClients reconnect by themselves."),
        ("docs/redis.md §Failover", 10, "- check the sentinels\n- check the clients"),
        ("docs/redis.md §By hand", 15, "Run the failover command."),
    ]
    by_hand = split(text)[-1]
    assert (by_hand.heading, by_hand.headings, by_hand.document, by_hand.source) == (
        "By hand",
        ("Redis runbook", "Failover", "By hand"),
        "docs/redis.md",
        SOURCE,
    )


def test_a_heading_at_the_same_level_closes_the_one_before() -> None:
    text = "# Top\n\n## One\n\nA.\n\n## Two\n\nB.\n\n# Next\n\nC.\n"
    assert [p.headings for p in split(text)] == [("Top", "One"), ("Top", "Two"), ("Next",)]


def test_setext_headings_and_closing_hashes_are_headings_too() -> None:
    text = "Redis\n=====\n\nIntro.\n\nFailover\n--------\n\nSteps.\n\n## Escalation ##\n\nPage SRE.\n"
    assert [(p.locator, p.headings) for p in split(text)] == [
        ("docs/redis.md §Redis", ("Redis",)),
        ("docs/redis.md §Failover", ("Redis", "Failover")),
        ("docs/redis.md §Escalation", ("Redis", "Escalation")),
    ]


def test_a_repeated_heading_is_numbered_in_document_order() -> None:
    text = "# Redis\n\n## Symptoms\n\nA.\n\n# Kafka\n\n## Symptoms\n\nB.\n\n## symptoms\n\nC.\n"
    assert [p.locator for p in split(text)] == [
        "docs/redis.md §Symptoms",
        "docs/redis.md §Symptoms (2)",
        "docs/redis.md §symptoms (3)",
    ]


def test_text_before_any_heading_is_cited_by_line() -> None:
    assert located(split("Read this first.\n\n# Redis\n\nBody.\n")) == [
        ("docs/redis.md:1", 1, "Read this first."),
        ("docs/redis.md §Redis", 5, "Body."),
    ]


def test_a_loose_list_with_continuations_stays_one_passage_with_its_lead_in() -> None:
    text = "# Steps\n\nDo this:\n1. check\n\n2. restart\n\n   wait for it\n3. verify\n\nAfterwards, tell SRE.\n"
    assert located(split(text)) == [
        ("docs/redis.md §Steps", 3, "Do this:\n1. check\n2. restart\n   wait for it\n3. verify"),
        ("docs/redis.md §Steps", 11, "Afterwards, tell SRE."),
    ]


def test_a_code_fence_is_never_split_and_hash_lines_in_it_are_not_headings() -> None:
    text = "# Failover\n\nRun:\n\n```sh\n# promote the replica\n\nredis-cli failover\n```\n\nThen check.\n"
    assert located(split(text)) == [
        ("docs/redis.md §Failover", 3, "Run:\n```sh\n# promote the replica\n\nredis-cli failover\n```"),
        ("docs/redis.md §Failover", 11, "Then check."),
    ]


def test_indented_code_is_fenced_in_the_passage_text() -> None:
    text = "# Failover\n\nRun:\n\n    redis-cli failover\n    redis-cli info\n\nDone.\n"
    assert [p.text for p in split(text)] == [
        "Run:\n```\n    redis-cli failover\n    redis-cli info\n```",
        "Done.",
    ]


def test_an_unclosed_fence_runs_to_the_end_and_is_closed() -> None:
    [passage] = split("# Failover\n\n~~~\nredis-cli failover\n")
    assert passage.text == "~~~\nredis-cli failover\n~~~"


def test_windows_line_ends_front_matter_and_comments_are_not_text() -> None:
    text = "---\ntitle: x\n---\r\n# Redis\r\n\r\nBody <!-- not this -->line.\r\n<!--\r\nhidden\r\n-->\r\nMore.\r\n"
    assert located(split(text)) == [("docs/redis.md §Redis", 6, "Body line.\nMore.")]


def test_plain_text_has_no_headings_and_is_cited_by_line() -> None:
    text = "Redis notes.\nSecond line.\n\n# not a heading here\nsame paragraph\n"
    assert located(split(text, "docs/notes.txt")) == [
        ("docs/notes.txt:1", 1, "Redis notes.\nSecond line."),
        ("docs/notes.txt:4", 4, "# not a heading here\nsame paragraph"),
    ]


def test_restructuredtext_headings_and_literal_blocks() -> None:
    text = "=====\nRedis\n=====\n\nFailover\n--------\n\nRun this::\n\n    redis-cli failover\n\nThen check.\n"
    assert [(p.locator, p.headings, p.text) for p in split(text, "docs/redis.rst")] == [
        ("docs/redis.rst §Failover", ("Redis", "Failover"), "Run this::\n```\n    redis-cli failover\n```"),
        ("docs/redis.rst §Failover", ("Redis", "Failover"), "Then check."),
    ]


def test_a_long_block_is_cut_into_passages_at_item_and_sentence_ends() -> None:
    steps = "\n".join(f"{n}. Step {n} restarts one redis replica and waits for it to sync." for n in range(1, 61))
    passages = split(f"# Restart\n\n{steps}\n")
    assert len(passages) > 1
    assert all(len(p.text) <= MAX_CHARS for p in passages)
    assert all(p.text.startswith(f"{n}. Step {n} ") for p, n in zip(passages, _first_steps(passages), strict=True))
    assert "\n".join(p.text for p in passages) == steps  # nothing lost, nothing repeated
    assert [p.line for p in passages] == [3 + n - 1 for n in _first_steps(passages)]


def _first_steps(passages: list[Passage]) -> list[int]:
    return [int(p.text.split(".", 1)[0]) for p in passages]


def test_one_endless_sentence_is_cut_at_a_word_and_marked() -> None:
    passages = split("# Notes\n\n" + "redis " * 300 + "\n")
    assert len(passages) == 2
    assert all(len(p.text) <= MAX_CHARS for p in passages)
    assert passages[0].text.endswith("redis …")


def test_a_long_code_block_cut_in_two_is_fenced_on_both_sides() -> None:
    code = "\n".join(f"redis-cli -n {n} flushdb" for n in range(120))
    passages = split(f"# Flush\n\n```\n{code}\n```\n")
    assert len(passages) == 3
    assert "\n".join(p.text.removeprefix("```\n").removesuffix("\n```") for p in passages) == code
    assert all(p.text.startswith("```") and p.text.endswith("```") for p in passages)


def test_trusted_runbooks_give_passages_and_untrusted_ones_none(tmp_path: Path) -> None:
    runbook = tmp_path / "docs" / "redis.md"
    runbook.parent.mkdir()
    runbook.write_text("# Redis\n\nThe token cache is backed by Redis.\n")
    trusted = read_runbooks("docs:docs", str(tmp_path / "docs"))
    assert [(p.locator, p.text) for p in trusted.passages] == [
        ("docs/redis.md §Redis", "The token cache is backed by Redis.")
    ]
    outside = read_runbooks("untrusted-docs:docs", str(tmp_path / "docs"), trusted=False)
    assert outside.assertions and outside.passages == ()


def test_a_binary_runbook_gives_no_passages() -> None:
    facts = parse_runbook(SOURCE, "docs/blob.md", b"\x00\x01# Redis\n")
    assert facts.passages == () and facts.problems

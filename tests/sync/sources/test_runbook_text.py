from __future__ import annotations

from graph.facts import Problem
from sync.sources.runbook_text import Paragraph, split_paragraphs, split_sentences


def test_wrapped_lines_join_their_paragraph_and_list_items_stay_apart() -> None:
    text = "Billing depends on the\nledger service.\n\n- Redis\n- Kafka\n"

    paragraphs, problems = split_paragraphs("docs/billing.md", text)

    assert paragraphs == (
        Paragraph(item=False, lines=((1, "Billing depends on the"), (2, "ledger service."))),
        Paragraph(item=True, lines=((4, "Redis"),)),
        Paragraph(item=True, lines=((5, "Kafka"),)),
    )
    assert problems == ()


def test_front_matter_is_skipped_but_line_numbers_count_it() -> None:
    text = "---\ntitle: Billing\n---\nBilling uses Kafka.\n"

    paragraphs, _ = split_paragraphs("docs/billing.md", text)

    assert paragraphs == (Paragraph(item=False, lines=((4, "Billing uses Kafka."),)),)


def test_markup_is_removed_but_code_spans_keep_their_underscores() -> None:
    text = "The [auth service](https://wiki/auth) is **backed** by `redis_main` and _Kafka_."

    paragraphs, _ = split_paragraphs("docs/auth.md", text)

    assert paragraphs[0].lines == ((1, "The auth service is backed by redis_main and Kafka."),)


def test_unclosed_fence_skips_the_rest_and_is_reported_with_file_and_line() -> None:
    text = "Billing uses Kafka.\n\n```sh\nBilling uses Redis.\n"

    paragraphs, problems = split_paragraphs("docs/billing.md", text)

    assert [p.lines for p in paragraphs] == [((1, "Billing uses Kafka."),)]
    assert problems == (
        Problem("docs/billing.md:3", "code fence is never closed; the rest of the file was skipped", "code"),
    )


def test_sentences_start_on_their_own_line_and_abbreviations_do_not_end_them() -> None:
    lines = [(7, "Billing uses stores, e.g. Redis. Billing"), (8, "also uses Kafka. It"), (9, ""), (10, "pages Ops.")]

    assert split_sentences(lines) == [
        (7, "Billing uses stores, e.g. Redis."),
        (7, "Billing also uses Kafka."),
        (8, "It pages Ops."),
    ]

"""Kinds of evidence, and the rules that rank and trust them: the one place that decides them.

Every citation is one kind of evidence:
- declared: a catalog descriptor, PagerDuty's service dependencies, an aliases file;
- documented: a runbook sentence or a triples entry, read from text;
- extracted: a model read it from a document and an admin approved it;
- observed: a trace source counted calls over a window;
- pushed: a webhook delivered it (deploy events).

An edge is *declared* when anything but traffic asserts it (the contract's `"declared"`), and
*observed* when a trace source saw it. Paths prefer the trusted kinds (declared by a catalog, or
observed), then the edges more sources agree on: corroborated edges first.
"""

from __future__ import annotations

from collections.abc import Iterable

from graph.facts import Citation

DECLARED, DOCUMENTED, EXTRACTED, OBSERVED, PUSHED = "declared", "documented", "extracted", "observed", "pushed"
KINDS = (DECLARED, DOCUMENTED, EXTRACTED, OBSERVED, PUSHED)

# Edges approved from the review queue come from this source (graph.review).
REVIEW_SOURCE = "review:extracted"
PUSHED_PREFIX = "webhook:"

# A trusted edge outranks any number of text corroborations when paths are compared.
TRUSTED_RANK = 1_000
_TRUSTED = frozenset({DECLARED, OBSERVED})


def evidence_of(citation: Citation) -> str:
    """The citation's kind of evidence: its own, or the one its source and `extracted` imply."""
    if citation.evidence:
        return citation.evidence
    if citation.source == REVIEW_SOURCE:
        return EXTRACTED
    if citation.extracted:
        return DOCUMENTED
    if citation.source.startswith(PUSHED_PREFIX):
        return PUSHED
    return DECLARED


def any_declared(citations: Iterable[Citation]) -> bool:
    """Whether anything but traffic asserts it: a catalog, a runbook, triples, an approved extraction."""
    return any(c.evidence != OBSERVED for c in citations)


def edge_rank(weight: int, text_only: bool) -> int:
    """How strongly an edge is held, for choosing among paths: trusted evidence first, then weight."""
    return weight + (0 if text_only else TRUSTED_RANK)


def kinds_of(citations: Iterable[Citation]) -> tuple[str, ...]:
    """The kinds of evidence among these citations, in `KINDS` order."""
    found = {evidence_of(c) for c in citations}
    return tuple(k for k in KINDS if k in found)

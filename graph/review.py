"""Edges a model proposed from a document, waiting for (or past) an admin's review. Pure values.

An approved proposal becomes an ordinary by-name, extracted assertion of the `review:extracted`
source, cited to its document chunk and the model that read it; a pending or rejected one is in
no answer. Ownership is never proposed: who gets paged comes from the catalog, not from prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from graph.evidence import REVIEW_SOURCE as REVIEW_SOURCE  # declared with the kinds of evidence
from graph.facts import Assertion, Citation
from graph.relations import DEPENDS_ON, TEXT_DEPENDENCIES

PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"

# The relations a model may propose: dependencies only. `owned_by` is absent on purpose, so no
# document (and no instruction hidden in one) can decide an owner.
EXTRACTABLE = (DEPENDS_ON, *sorted(TEXT_DEPENDENCIES))


_SEPARATORS = re.compile(r"[\W_]+")


def plain_name(text: str) -> str:
    """Lower case, separators as single spaces: `Auth-Service` and `auth service` meet (how a
    proposal's names are compared, in checks and in its identity)."""
    return " ".join(_SEPARATORS.sub(" ", text.lower()).split())


class ReviewError(Exception):
    """A decision that cannot be made (unknown id, already decided); nothing was changed."""


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """Where a proposal was read: the document, its chunk number (from 1) and the lines it spans."""

    document: str
    index: int
    first_line: int
    last_line: int


@dataclass(frozen=True, slots=True)
class ProposedEdge:
    """`src rel dst` as a model read it in one chunk, with the sentence it quoted as evidence."""

    id: int
    src: str
    rel: str
    dst: str
    evidence: str
    chunk: ChunkRef
    line: int  # the line the evidence starts on
    model: str
    status: str = PENDING
    proposed_at: datetime | None = None
    decided_by: str = ""
    decided_at: datetime | None = None

    @property
    def where(self) -> str:
        """`runbooks/redis.md:12 (chunk 1, lines 10-24, claude-haiku-4-5)`: the citation people read."""
        c = self.chunk
        return f"{c.document}:{self.line} (chunk {c.index}, lines {c.first_line}-{c.last_line}, {self.model})"


def approved_assertion(edge: ProposedEdge) -> Assertion:
    """The assertion an approved proposal adds: by name, extracted, counted once per document."""
    citation = Citation(REVIEW_SOURCE, edge.where, origin=edge.chunk.document, text=edge.evidence, extracted=True)
    return Assertion(edge.src, edge.rel, edge.dst, citation, by_name=True)

"""Extracted edges in the database: proposed, listed, approved or rejected (with an audit row), and the
approved ones read back as the facts of the `review:extracted` source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import RowMapping, func, insert, select, update

from graph.facts import SourceFacts
from graph.review import (
    APPROVED,
    PENDING,
    REJECTED,
    REVIEW_SOURCE,
    ChunkRef,
    ProposedEdge,
    ReviewError,
    approved_assertion,
    plain_name,
)
from sync.store import schema
from sync.store.fact_store import Store
from sync.store.graph_changes import step

DECISIONS = {"approve": APPROVED, "reject": REJECTED}
__all__ = ["DECISIONS", "Proposal", "Proposed", "ReviewError", "ReviewStore"]


@dataclass(frozen=True, slots=True)
class Proposal:
    """A checked candidate from one chunk, ready to be held for review."""

    src: str
    rel: str
    dst: str
    evidence: str
    chunk: ChunkRef
    line: int
    chunk_digest: str
    model: str

    @property
    def key(self) -> str:
        """Same names, relation, document and chunk content: the same proposal, whoever made it."""
        parts = (plain_name(self.src), self.rel, plain_name(self.dst), self.chunk.document, self.chunk_digest)
        return hashlib.blake2b("\0".join(parts).encode(), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Proposed:
    added: int = 0
    pending: int = 0  # proposed before and still waiting
    approved: int = 0  # proposed before and already approved
    rejected: int = 0  # proposed before and rejected: not proposed again


def _utc(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def _edge(row: Mapping[str, Any] | RowMapping) -> ProposedEdge:
    return ProposedEdge(
        id=row["id"],
        src=row["src"],
        rel=row["rel"],
        dst=row["dst"],
        evidence=row["evidence"],
        chunk=ChunkRef(row["document"], row["chunk_index"], row["first_line"], row["last_line"]),
        line=row["line"],
        model=row["model"],
        status=row["status"],
        proposed_at=_utc(row["proposed_at"]),
        decided_by=row["decided_by"],
        decided_at=_utc(row["decided_at"]),
    )


class ReviewStore:
    """Each method is one transaction; approving moves the graph version so every replica rebuilds."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def propose(self, proposals: Iterable[Proposal], *, at: datetime) -> Proposed:
        e = schema.extracted_edges
        wanted = {p.key: p for p in proposals}
        with self.engine.begin() as conn:
            known = dict(conn.execute(select(e.c.edge_key, e.c.status).where(e.c.edge_key.in_(list(wanted)))).all())
            new = [_row(p, at) for key, p in wanted.items() if key not in known]
            if new:
                conn.execute(insert(e), new)
        seen = list(known.values())
        return Proposed(len(new), seen.count(PENDING), seen.count(APPROVED), seen.count(REJECTED))

    def edges(self, status: str | None = PENDING, *, limit: int | None = None) -> list[ProposedEdge]:
        e = schema.extracted_edges
        query = select(e).order_by(e.c.id)
        if status is not None:
            query = query.where(e.c.status == status)
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [_edge(row) for row in conn.execute(query).mappings()]

    def count(self, status: str = PENDING) -> int:
        e = schema.extracted_edges
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).where(e.c.status == status)).scalar_one())

    def decide(self, ids: Sequence[int], decision: str, *, actor: str, at: datetime) -> list[ProposedEdge]:
        """Approve or reject pending edges, all or none, each with an audit row naming `actor`.

        Raises ReviewError (changing nothing) when an id is unknown or already decided.
        """
        if decision not in DECISIONS:
            raise ReviewError(f"unknown decision {decision!r}: expected approve or reject")
        if not ids:
            raise ReviewError("give the id of at least one extracted edge (oncall-graph review lists them)")
        status = DECISIONS[decision]
        e = schema.extracted_edges
        with self.engine.begin() as conn:
            rows = {r["id"]: r for r in conn.execute(select(e).where(e.c.id.in_(list(ids)))).mappings()}
            for edge_id in ids:
                row = rows.get(edge_id)
                if row is None:
                    raise ReviewError(f"no extracted edge #{edge_id}")
                if row["status"] != PENDING:
                    by = f" by {row['decided_by']}" if row["decided_by"] else ""
                    raise ReviewError(f"extracted edge #{edge_id} was already {row['status']}{by}")
            ordered = list(dict.fromkeys(ids))
            changed = conn.execute(
                update(e)
                .where(e.c.id.in_(ordered), e.c.status == PENDING)
                .values(status=status, decided_at=at, decided_by=actor)
            )
            if changed.rowcount != len(ordered):  # another admin decided one of them meanwhile
                raise ReviewError("another reviewer decided one of these edges just now; list them again")
            decided = [_edge({**rows[i], "status": status, "decided_at": at, "decided_by": actor}) for i in ordered]
            conn.execute(insert(schema.review_audit), [_audit(edge, decision, actor, at) for edge in decided])
            if status == APPROVED:  # with the approval, so a follower never sees one without the other
                step(conn, at=at, source=REVIEW_SOURCE)
        return decided

    def approved_facts(self, *, as_of: datetime | None = None) -> SourceFacts | None:
        """The approved edges (those approved by `as_of`, when given) as one source's facts; None if none."""
        e = schema.extracted_edges
        query = select(e).where(e.c.status == APPROVED).order_by(e.c.id)
        if as_of is not None:
            query = query.where(e.c.decided_at <= as_of)
        with self.engine.connect() as conn:
            edges = [_edge(row) for row in conn.execute(query).mappings()]
        if not edges:
            return None
        return SourceFacts(REVIEW_SOURCE, assertions=tuple(approved_assertion(edge) for edge in edges))


def _row(p: Proposal, at: datetime) -> dict[str, object]:
    c = p.chunk
    return {
        "edge_key": p.key, "src": p.src, "rel": p.rel, "dst": p.dst, "evidence": p.evidence,
        "document": c.document, "chunk_index": c.index, "first_line": c.first_line, "last_line": c.last_line,
        "line": p.line, "chunk_digest": p.chunk_digest, "model": p.model, "status": PENDING, "proposed_at": at,
        "decided_by": "",
    }  # fmt: skip


def _audit(edge: ProposedEdge, decision: str, actor: str, at: datetime) -> dict[str, object]:
    subject = f"extracted edge #{edge.id}: {edge.src} {edge.rel} {edge.dst}"
    return {"subject": subject, "action": f"{decision}-extracted", "actor": actor, "note": edge.where, "at": at}

"""The database tables (SQLAlchemy Core). Alembic migrations in `sync/store/migrations` create them."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# One row per configured source, with its freshness and any change held for review.
sources = Table(
    "sources",
    metadata,
    Column("name", String(500), primary_key=True),
    Column("kind", String(40), nullable=False),
    Column("location", Text, nullable=False),
    Column("content_version", String(200), nullable=False, default=""),
    Column("last_success", DateTime(timezone=True)),
    Column("last_attempt", DateTime(timezone=True)),
    Column("last_error", Text, nullable=False, default=""),
    Column("held_version", String(200), nullable=False, default=""),
    Column("held_reason", Text, nullable=False, default=""),
    Column("stale", Boolean, nullable=False, default=False),
    Column("stale_changed_at", DateTime(timezone=True)),
    Column("last_refused", Text, nullable=False, default=""),  # pushed sources: the last delivery refused, and why
    Column("last_refused_at", DateTime(timezone=True)),
)


def _fact_columns() -> list[Column[object]]:
    """A fact row as the codec writes it (sync/store/fact_codec.py): whose, what kind, its key and JSON."""
    return [
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("source", String(500), ForeignKey("sources.name", ondelete="CASCADE"), nullable=False),
        Column("kind", String(16), nullable=False),
        Column("fact_key", String(32), nullable=False),
        Column("payload", Text, nullable=False),
    ]


# Every fact a source ever asserted; live while valid_to is NULL. History answers --as-of.
facts = Table(
    "facts",
    metadata,
    *_fact_columns(),
    Column("valid_from", DateTime(timezone=True), nullable=False),
    Column("valid_to", DateTime(timezone=True)),
    # The graph change (graph_changes.id) that added or retired the row; NULL for rows from before 0005.
    Column("added_in", Integer),
    Column("retired_in", Integer),
    Index("ix_facts_live", "source", "valid_to"),
    Index("ix_facts_window", "valid_from", "valid_to"),
    Index("ix_facts_added_in", "added_in"),
    Index("ix_facts_retired_in", "retired_in"),
)

# A held change waits here until an admin accepts it (`oncall-graph sync --accept SOURCE`).
held_facts = Table(
    "held_facts",
    metadata,
    *_fact_columns(),
    Index("ix_held_facts_source", "source"),
)

sync_runs = Table(
    "sync_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", String(500), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("outcome", String(20), nullable=False),  # applied | unchanged | failed | held
    Column("items", Integer, nullable=False, default=0),
    Column("added", Integer, nullable=False, default=0),
    Column("retired", Integer, nullable=False, default=0),
    Column("content_version", String(200), nullable=False, default=""),
    Column("error", Text, nullable=False, default=""),
    Column("replica", String(200), nullable=False, default=""),
    Index("ix_sync_runs_source_started", "source", "started_at"),
)

# The graph version: replicas rebuild their snapshot when it moves.
graph_state = Table(
    "graph_state",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("version", Integer, nullable=False),
    Column("changed_at", DateTime(timezone=True), nullable=False),
)

# The calls each observed edge carried, as of its source's last good read: beside the facts, not in
# their history, so a poll that changes only the counts moves no graph version (graph.observed).
observed_calls = Table(
    "observed_calls",
    metadata,
    Column("source", String(500), ForeignKey("sources.name", ondelete="CASCADE"), primary_key=True),
    Column("call_key", String(1000), primary_key=True),  # the observation's citation origin
    Column("calls", BigInteger, nullable=False),
    Column("failed", BigInteger, nullable=False),
    Column("window_seconds", Integer, nullable=False),
    Column("first_seen", DateTime(timezone=True)),
    Column("last_seen", DateTime(timezone=True), nullable=False),
)

# One row per graph version step: what moved it. A follower whose snapshot is at version `a` reads
# the steps (a, b]; when each changed deploys alone, the fact rows tagged with their ids are the delta.
# The id is taken when the change starts, the version when it commits (the version row's lock is
# held only from then to the commit), so versions are assigned in commit order.
graph_changes = Table(
    "graph_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("version", Integer, unique=True),
    Column("deploys_only", Boolean, nullable=False, default=False),
    Column("source", String(500), nullable=False, default=""),  # whose facts changed ("" : no source's)
    Column("changed_at", DateTime(timezone=True), nullable=False),
)

# Slack events, commands and alert messages taken for an answer: the unique key makes a reply once-only;
# `state` (claimed -> delivered, or failed) lets a retry of an answer that never arrived answer it.
handled_events = Table(
    "handled_events",
    metadata,
    Column("event_key", String(300), primary_key=True),
    Column("handled_at", DateTime(timezone=True), nullable=False),
    Column("replica", String(200), nullable=False, default=""),
    Column("state", String(16), nullable=False, default="delivered", server_default="delivered"),
)

# Lag alerts sent: one row per (source, transition), so one replica alone sends each.
lag_alerts = Table(
    "lag_alerts",
    metadata,
    Column("alert_key", String(600), primary_key=True),
    Column("source", String(500), nullable=False),
    Column("state", String(20), nullable=False),  # stale | recovered
    Column("sent_at", DateTime(timezone=True), nullable=False),
)

# Who approved or rejected what (held edges, held source changes).
review_audit = Table(
    "review_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("subject", Text, nullable=False),
    Column("action", String(40), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("note", Text, nullable=False, default=""),
    Column("at", DateTime(timezone=True), nullable=False),
)

# Edges a model proposed from documents (`oncall-graph extract`): pending until an admin approves or
# rejects them. The key (names, relation, document, chunk content) keeps a rejected edge from being
# proposed again by the same chunk; approved ones enter the graph as the `review:extracted` source.
extracted_edges = Table(
    "extracted_edges",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("edge_key", String(32), nullable=False, unique=True),
    Column("src", String(500), nullable=False),
    Column("rel", String(40), nullable=False),
    Column("dst", String(500), nullable=False),
    Column("evidence", Text, nullable=False),
    Column("document", String(1000), nullable=False),
    Column("chunk_index", Integer, nullable=False),
    Column("first_line", Integer, nullable=False),
    Column("last_line", Integer, nullable=False),
    Column("line", Integer, nullable=False),
    Column("chunk_digest", String(32), nullable=False),
    Column("model", String(200), nullable=False),
    Column("status", String(16), nullable=False),  # pending | approved | rejected
    Column("proposed_at", DateTime(timezone=True), nullable=False),
    Column("decided_at", DateTime(timezone=True)),
    Column("decided_by", String(200), nullable=False, default=""),
    Index("ix_extracted_edges_status", "status"),
)

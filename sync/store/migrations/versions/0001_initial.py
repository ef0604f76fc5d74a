"""The first tables: sources, facts with history, held changes, sync runs, graph state, events, alerts, audit.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "sources",
        sa.Column("name", sa.String(500), primary_key=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("location", sa.Text, nullable=False),
        sa.Column("content_version", sa.String(200), nullable=False, server_default=""),
        sa.Column("last_success", TZ),
        sa.Column("last_attempt", TZ),
        sa.Column("last_error", sa.Text, nullable=False, server_default=""),
        sa.Column("held_version", sa.String(200), nullable=False, server_default=""),
        sa.Column("held_reason", sa.Text, nullable=False, server_default=""),
        sa.Column("stale", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("stale_changed_at", TZ),
        sa.PrimaryKeyConstraint("name", name="pk_sources"),
    )
    op.create_table(
        "facts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("fact_key", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("valid_from", TZ, nullable=False),
        sa.Column("valid_to", TZ),
        sa.ForeignKeyConstraint(["source"], ["sources.name"], name="fk_facts_source_sources", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_facts"),
    )
    op.create_index("ix_facts_live", "facts", ["source", "valid_to"])
    op.create_index("ix_facts_window", "facts", ["valid_from", "valid_to"])
    op.create_table(
        "held_facts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("fact_key", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.ForeignKeyConstraint(["source"], ["sources.name"], name="fk_held_facts_source_sources", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_held_facts"),
    )
    op.create_index("ix_held_facts_source", "held_facts", ["source"])
    op.create_table(
        "sync_runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("finished_at", TZ, nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("items", sa.Integer, nullable=False, server_default="0"),
        sa.Column("added", sa.Integer, nullable=False, server_default="0"),
        sa.Column("retired", sa.Integer, nullable=False, server_default="0"),
        sa.Column("content_version", sa.String(200), nullable=False, server_default=""),
        sa.Column("error", sa.Text, nullable=False, server_default=""),
        sa.Column("replica", sa.String(200), nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("id", name="pk_sync_runs"),
    )
    op.create_index("ix_sync_runs_source_started", "sync_runs", ["source", "started_at"])
    op.create_table(
        "graph_state",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("changed_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_graph_state"),
    )
    op.create_table(
        "handled_events",
        sa.Column("event_key", sa.String(300), primary_key=True),
        sa.Column("handled_at", TZ, nullable=False),
        sa.Column("replica", sa.String(200), nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("event_key", name="pk_handled_events"),
    )
    op.create_table(
        "lag_alerts",
        sa.Column("alert_key", sa.String(600), primary_key=True),
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("sent_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("alert_key", name="pk_lag_alerts"),
    )
    op.create_table(
        "review_audit",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_review_audit"),
    )


def downgrade() -> None:
    for table in ("review_audit", "lag_alerts", "handled_events", "graph_state", "sync_runs", "held_facts", "facts"):
        op.drop_table(table)
    op.drop_table("sources")

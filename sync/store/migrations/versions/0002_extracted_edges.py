"""Edges extracted from documents by a model, held for review.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "extracted_edges",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("edge_key", sa.String(32), nullable=False),
        sa.Column("src", sa.String(500), nullable=False),
        sa.Column("rel", sa.String(40), nullable=False),
        sa.Column("dst", sa.String(500), nullable=False),
        sa.Column("evidence", sa.Text, nullable=False),
        sa.Column("document", sa.String(1000), nullable=False),
        sa.Column("chunk_index", sa.Integer, nullable=False),
        sa.Column("first_line", sa.Integer, nullable=False),
        sa.Column("last_line", sa.Integer, nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("chunk_digest", sa.String(32), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("proposed_at", TZ, nullable=False),
        sa.Column("decided_at", TZ),
        sa.Column("decided_by", sa.String(200), nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("id", name="pk_extracted_edges"),
        sa.UniqueConstraint("edge_key", name="uq_extracted_edges_edge_key"),
    )
    op.create_index("ix_extracted_edges_status", "extracted_edges", ["status"])


def downgrade() -> None:
    op.drop_table("extracted_edges")

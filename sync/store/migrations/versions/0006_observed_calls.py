"""The calls each observed edge carried (`observed_calls`), kept beside the facts: a trace source's
poll that changes only the counts replaces these rows and moves no graph version.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "observed_calls",
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("call_key", sa.String(1000), nullable=False),
        sa.Column("calls", sa.BigInteger, nullable=False),
        sa.Column("failed", sa.BigInteger, nullable=False),
        sa.Column("window_seconds", sa.Integer, nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True)),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["source"], ["sources.name"], name="fk_observed_calls_source_sources", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("source", "call_key", name="pk_observed_calls"),
    )


def downgrade() -> None:
    op.drop_table("observed_calls")

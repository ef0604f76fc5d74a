"""What each graph version step changed: `graph_changes` (one row per step, deploys only or not) and
the change that added and retired each fact row, so a follower reads only the rows of the steps it
missed. Rows from before carry no change: a follower older than this rebuilds once.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "graph_changes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("version", sa.Integer),
        sa.Column("deploys_only", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("source", sa.String(500), nullable=False, server_default=""),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_graph_changes"),
        sa.UniqueConstraint("version", name="uq_graph_changes_version"),
    )
    # Plain ADD COLUMN on both databases (nullable, no default): no copy of the facts table.
    op.add_column("facts", sa.Column("added_in", sa.Integer))
    op.add_column("facts", sa.Column("retired_in", sa.Integer))
    op.create_index("ix_facts_added_in", "facts", ["added_in"])
    op.create_index("ix_facts_retired_in", "facts", ["retired_in"])


def downgrade() -> None:
    op.drop_index("ix_facts_retired_in", "facts")
    op.drop_index("ix_facts_added_in", "facts")
    with op.batch_alter_table("facts") as batch:
        batch.drop_column("retired_in")
        batch.drop_column("added_in")
    op.drop_table("graph_changes")

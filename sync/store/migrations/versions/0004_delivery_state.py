"""The delivery state of a claimed answer (claimed, delivered, failed), so a retry of an event whose
answer never arrived is answered. Rows from before were claimed and posted once: they count as delivered.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("handled_events") as batch:
        batch.add_column(sa.Column("state", sa.String(16), nullable=False, server_default="delivered"))


def downgrade() -> None:
    with op.batch_alter_table("handled_events") as batch:
        batch.drop_column("state")

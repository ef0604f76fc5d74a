"""A pushed source's last refused delivery, with why (shown by /graph-lag and `oncall-graph lag`).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sources") as batch:
        batch.add_column(sa.Column("last_refused", sa.Text, nullable=False, server_default=""))
        batch.add_column(sa.Column("last_refused_at", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("last_refused_at")
        batch.drop_column("last_refused")

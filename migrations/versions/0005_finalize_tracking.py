"""a sharded job's finalize message is tracked like a shard's: when it was sent, and how often it ran

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("finalize_enqueued_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "jobs", sa.Column("finalize_attempts", sa.Integer(), server_default=sa.text("0"), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("jobs", "finalize_attempts")
    op.drop_column("jobs", "finalize_enqueued_at")

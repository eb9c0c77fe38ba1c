"""batches of requests: batches and batch_items

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 17:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "batches",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("job_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["owner_id"], ["api_keys.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_batches_owner_created", "batches", ["owner_id", "created_at"])
    op.create_table(
        "batch_items",
        sa.Column("batch_id", sa.UUID(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("client_id", sa.String(length=100), nullable=False),
        sa.Column("job_id", sa.UUID(), nullable=True),
        sa.Column("error", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("batch_id", "position"),
        sa.UniqueConstraint("batch_id", "client_id", name="ux_batch_items_client_id"),
    )
    op.create_index("ix_batch_items_job_id", "batch_items", ["job_id"])


def downgrade() -> None:
    op.drop_index("ix_batch_items_job_id", table_name="batch_items")
    op.drop_table("batch_items")
    op.drop_index("ix_batches_owner_created", table_name="batches")
    op.drop_table("batches")

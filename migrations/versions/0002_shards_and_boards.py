"""shards and boards

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 11:08:41.077034
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "boards",
        sa.Column("job_id", sa.UUID(), nullable=False),
        sa.Column("code", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "code"),
    )
    op.create_table(
        "shards",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("job_id", sa.UUID(), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), server_default=sa.text("'queued'"), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("lease_owner", sa.Text(), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("row_count", sa.Integer(), nullable=True),
        sa.Column("summary", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("error", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("solve_seconds", sa.Float(), nullable=True),
        sa.CheckConstraint(
            "state IN ('queued', 'running', 'succeeded', 'split', 'failed', 'cancelled')",
            name="shards_state_valid",
        ),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "key", name="ux_shards_job_key"),
    )
    op.create_index(
        "ix_shards_unfinished",
        "shards",
        ["state", "lease_expires_at"],
        unique=False,
        postgresql_where=sa.text("state IN ('queued', 'running')"),
    )
    op.add_column(
        "jobs", sa.Column("shards_total", sa.Integer(), server_default=sa.text("0"), nullable=False)
    )
    op.add_column("jobs", sa.Column("shards_done", sa.Integer(), server_default=sa.text("0"), nullable=False))
    op.add_column(
        "jobs", sa.Column("rows_done", sa.BigInteger(), server_default=sa.text("0"), nullable=False)
    )
    op.add_column("jobs", sa.Column("rows_job_id", sa.UUID(), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "rows_job_id")
    op.drop_column("jobs", "rows_done")
    op.drop_column("jobs", "shards_done")
    op.drop_column("jobs", "shards_total")
    op.drop_index(
        "ix_shards_unfinished",
        table_name="shards",
        postgresql_where=sa.text("state IN ('queued', 'running')"),
    )
    op.drop_table("shards")
    op.drop_table("boards")

"""dashboard: job events, worker heartbeats, finished-at indexes

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "job_events",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("job_id", sa.UUID(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("event", sa.String(length=32), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=True),
        sa.Column("actor_key_id", sa.BigInteger(), nullable=True),
        sa.Column("detail", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.ForeignKeyConstraint(["actor_key_id"], ["api_keys.id"]),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_job_events_job", "job_events", ["job_id", "id"], unique=False)
    op.create_table(
        "workers",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("hostname", sa.Text(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("node", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column(
            "heartbeat_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_index(op.f("ix_workers_heartbeat_at"), "workers", ["heartbeat_at"], unique=False)
    op.create_index("ix_jobs_finished_at", "jobs", ["finished_at"], unique=False)
    op.create_index("ix_shards_finished_at", "shards", ["finished_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_shards_finished_at", table_name="shards")
    op.drop_index("ix_jobs_finished_at", table_name="jobs")
    op.drop_index(op.f("ix_workers_heartbeat_at"), table_name="workers")
    op.drop_table("workers")
    op.drop_index("ix_job_events_job", table_name="job_events")
    op.drop_table("job_events")

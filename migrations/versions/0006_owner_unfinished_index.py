"""a client's unfinished jobs, by state: what the per-key quota counts and fair release reads

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 23:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_jobs_owner_unfinished",
        "jobs",
        ["owner_id", "state"],
        unique=False,
        postgresql_where=sa.text("state IN ('queued', 'running', 'cancelling')"),
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_owner_unfinished", table_name="jobs")

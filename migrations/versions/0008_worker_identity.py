"""every worker process its own identity: the start (boot) of the Celery worker it belongs to, and when
its parent saw it leave the pool, so two workers on one host never touch each other's rows and a dead
process's leases are recognised at once

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 00:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("workers", sa.Column("boot_id", sa.Text(), nullable=True))
    op.add_column("workers", sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_workers_boot_id", "workers", ["boot_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_workers_boot_id", table_name="workers")
    op.drop_column("workers", "stopped_at")
    op.drop_column("workers", "boot_id")

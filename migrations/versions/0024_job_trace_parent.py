"""a job's trace: the W3C traceparent of the request that made it

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29 07:00:00.000000

With tracing on (core.tracing), the workers' spans of a job (its run, its shards, its finalize) join the
trace of the request that submitted it through this column, whichever process sent its message.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("trace_parent", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "trace_parent")

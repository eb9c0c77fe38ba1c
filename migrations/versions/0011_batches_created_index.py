"""the dashboard's list of every client's batches reads an index, newest first, instead of sorting the table

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24 05:15:00.000000

An admin's batch list pages by (created_at, id) over all owners; only (owner_id, created_at) was indexed,
which serves one client's list but not everyone's.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_batches_created_id", "batches", ["created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_batches_created_id", table_name="batches")

"""a batch honours Idempotency-Key as a job does: the key, unique per owner, and the request's digest

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-29 04:40:00.000000

A client that repeats a `POST /batches` after a dropped answer made a second batch, with its own jobs.
Now the same key and the same request answer the batch made the first time; the same key with another
request is refused.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("batches", sa.Column("idempotency_key", sa.Text(), nullable=True))
    op.add_column("batches", sa.Column("request_hash", sa.Text(), nullable=True))
    op.create_index(
        "ux_batches_owner_idempotency_key",
        "batches",
        ["owner_id", "idempotency_key"],
        unique=True,
        postgresql_where=sa.text("idempotency_key IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ux_batches_owner_idempotency_key", table_name="batches")
    op.drop_column("batches", "request_hash")
    op.drop_column("batches", "idempotency_key")

"""which worker processes run jobs and shards: the dispatch window counts those alone

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-01 20:00:00.000000

A key's window (store.dispatch) was every live worker process plus one, webhook senders included: with
`zolve up`'s two webhook processes beside two solvers and a short lane, a key had six jobs in flight for
three processes that could run them, and a newcomer waited behind three rounds of its jobs.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "workers", sa.Column("solves", sa.Boolean(), server_default=sa.text("true"), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("workers", "solves")

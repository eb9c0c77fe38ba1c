"""the shards sent to the broker and not yet claimed have an index of their own: a chain asks for them

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28 03:10:00.000000

A worker that finished a shard takes its job's next held shard (a chain) only while no other client's
shard waits in the broker, so two clients' bulk jobs take turns. The question is asked in the claim's own
statement; this index holds the few rows it reads (sent, not yet claimed) and none of the held ones.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SENT = sa.text("state = 'queued' AND enqueued_at IS NOT NULL")


def upgrade() -> None:
    op.create_index("ix_shards_sent", "shards", ["job_id"], postgresql_where=SENT)


def downgrade() -> None:
    op.drop_index("ix_shards_sent", table_name="shards")

"""the held work (queued, never sent) has indexes of its own: a release ranks one client's held rows

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 02:00:00.000000

store.dispatch releases per client, under that client's lock: it reads the client's held jobs oldest
first and the held shards of its running jobs, which these partial indexes hold and nothing else.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HELD = sa.text("state = 'queued' AND enqueued_at IS NULL")


def upgrade() -> None:
    op.create_index("ix_jobs_held", "jobs", ["owner_id", "created_at", "id"], postgresql_where=HELD)
    op.create_index("ix_shards_held", "shards", ["job_id", "id"], postgresql_where=HELD)


def downgrade() -> None:
    op.drop_index("ix_shards_held", table_name="shards")
    op.drop_index("ix_jobs_held", table_name="jobs")

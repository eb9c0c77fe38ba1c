"""api keys have a session generation: logging out of the dashboard ends every copy of the session cookie

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 02:10:00.000000

A dashboard session (a signed cookie) names the generation its key had at login; logout moves the key's
generation on, so a copy of the cookie taken before is refused (issue 37, item 6).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "api_keys", sa.Column("session_generation", sa.Integer(), server_default=sa.text("0"), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("api_keys", "session_generation")

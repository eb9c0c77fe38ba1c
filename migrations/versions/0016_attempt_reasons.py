"""webhook attempts keep a reason of our own instead of the receiver's answer

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 02:30:00.000000

webhook_attempts.error held up to 200 characters of the receiver's body and exceptions' text, which let a
client read internal services through the delivery log (issue 37, item 5). It becomes `reason`: `HTTP
<status>`, `timeout`, `connection refused`, ... Rows already stored are rewritten to such a reason, so
no receiver's bytes remain.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.alter_column("webhook_attempts", "error", new_column_name="reason")
    op.execute(
        """
        UPDATE webhook_attempts SET reason = CASE
            WHEN status_code >= 400 THEN 'HTTP ' || status_code
            WHEN status_code IS NOT NULL THEN NULL
            WHEN reason ~ '^refused: the host .* does not resolve' THEN 'host does not resolve'
            WHEN reason ~ '^refused:' THEN 'address not allowed'
            WHEN reason ~* 'timeout|timed out' THEN 'timeout'
            WHEN reason ~* 'connection refused' THEN 'connection refused'
            ELSE 'connection failed'
        END
        WHERE reason IS NOT NULL
        """
    )


def downgrade() -> None:
    op.alter_column("webhook_attempts", "reason", new_column_name="error")

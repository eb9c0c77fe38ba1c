"""an event's writer has its transaction id before the event takes its id, so the event feed can tell an
id that may still commit from one that never will (store.listen)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 01:45:00.000000

`job_events.id` comes from a sequence when the row is built, and a transaction gets its id at its first
write, which for a transaction whose first write is the event comes after the sequence. A BEFORE INSERT
statement trigger asks for the transaction id (`pg_current_xact_id()`) before any row of the statement is
built: whoever holds an event id is then listed as in progress in every snapshot taken after it.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE FUNCTION zolve_event_writer_xid() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_current_xact_id();
            RETURN NULL;
        END $$
        """
    )
    op.execute(
        "CREATE TRIGGER job_events_writer_xid BEFORE INSERT ON job_events "
        "FOR EACH STATEMENT EXECUTE FUNCTION zolve_event_writer_xid()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER job_events_writer_xid ON job_events")
    op.execute("DROP FUNCTION zolve_event_writer_xid()")

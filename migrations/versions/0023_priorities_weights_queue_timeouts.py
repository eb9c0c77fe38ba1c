"""priorities, weights, per-key caps and queue timeouts: what a shared service's tenants ask for

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-29 07:00:00.000000

A job's `priority` orders its owner's waiting work (the held-jobs index now ranks by it); its
`queue_timeout` ends it `expired` when it has not started in time, a final state like the others (the
state check, and the triggers that deliver webhooks at a job's end, learn it). A key's `weight` scales its
window of work in flight against other keys', and its `max_in_flight` caps that window.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FINAL_BEFORE = "('succeeded', 'failed', 'cancelled')"
FINAL_AFTER = "('succeeded', 'failed', 'cancelled', 'expired')"
STATES_BEFORE = "('queued', 'running', 'succeeded', 'failed', 'cancelling', 'cancelled')"
STATES_AFTER = "('queued', 'running', 'succeeded', 'failed', 'cancelling', 'cancelled', 'expired')"

JOB_FINISHED = """
CREATE OR REPLACE FUNCTION zolve_job_finished() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    batch_row batches%ROWTYPE;
BEGIN
    IF NEW.callback_url IS NOT NULL THEN
        INSERT INTO webhook_deliveries (owner_id, job_id, url, job_run)
        VALUES (NEW.owner_id, NEW.id, NEW.callback_url, NEW.retries)
        ON CONFLICT DO NOTHING;
    END IF;
    SELECT b.* INTO batch_row FROM batches b JOIN batch_items i ON i.batch_id = b.id
    WHERE i.job_id = NEW.id AND b.callback_url IS NOT NULL LIMIT 1;
    IF FOUND THEN
        PERFORM 1 FROM batches WHERE id = batch_row.id FOR UPDATE;
        IF NOT EXISTS (
            SELECT 1 FROM batch_items i JOIN jobs j ON j.id = i.job_id
            WHERE i.batch_id = batch_row.id AND j.id <> NEW.id AND j.state NOT IN {final}
        ) THEN
            INSERT INTO webhook_deliveries (owner_id, batch_id, url)
            VALUES (batch_row.owner_id, batch_row.id, batch_row.callback_url)
            ON CONFLICT DO NOTHING;
        END IF;
    END IF;
    RETURN NULL;
END $$
"""


def _final_states(states: str, final: str) -> None:
    op.drop_constraint("jobs_state_valid", "jobs", type_="check")
    op.create_check_constraint("jobs_state_valid", "jobs", f"state IN {states}")
    op.execute(JOB_FINISHED.format(final=final))
    op.execute("DROP TRIGGER job_finished_update ON jobs")
    op.execute("DROP TRIGGER job_finished_insert ON jobs")
    op.execute(
        "CREATE TRIGGER job_finished_update AFTER UPDATE OF state ON jobs FOR EACH ROW "
        f"WHEN (NEW.state IN {final} AND OLD.state NOT IN {final}) EXECUTE FUNCTION zolve_job_finished()"
    )
    op.execute(
        "CREATE TRIGGER job_finished_insert AFTER INSERT ON jobs FOR EACH ROW "
        f"WHEN (NEW.state IN {final}) EXECUTE FUNCTION zolve_job_finished()"
    )


def _held_index(*ranked: sa.TextClause | str) -> None:
    op.drop_index("ix_jobs_held", table_name="jobs")
    op.create_index(
        "ix_jobs_held",
        "jobs",
        ["owner_id", *ranked, "created_at", "id"],
        postgresql_where=sa.text("state = 'queued' AND enqueued_at IS NULL"),
    )


def upgrade() -> None:
    op.add_column(
        "jobs", sa.Column("priority", sa.SmallInteger(), nullable=False, server_default=sa.text("0"))
    )
    op.add_column("jobs", sa.Column("queue_timeout", sa.Float(), nullable=True))
    op.create_check_constraint("jobs_priority_range", "jobs", "priority BETWEEN -100 AND 100")
    op.create_index(
        "ix_jobs_queue_timeout",
        "jobs",
        ["created_at"],
        postgresql_where=sa.text("state = 'queued' AND queue_timeout IS NOT NULL AND started_at IS NULL"),
    )
    _held_index(sa.text("priority DESC"))
    _final_states(STATES_AFTER, FINAL_AFTER)
    op.add_column("api_keys", sa.Column("weight", sa.Float(), nullable=False, server_default=sa.text("1")))
    op.add_column("api_keys", sa.Column("max_in_flight", sa.Integer(), nullable=True))
    op.create_check_constraint("api_keys_weight_range", "api_keys", "weight > 0 AND weight <= 100")
    op.create_check_constraint("api_keys_max_in_flight_positive", "api_keys", "max_in_flight >= 1")


def downgrade() -> None:
    op.drop_constraint("api_keys_max_in_flight_positive", "api_keys", type_="check")
    op.drop_constraint("api_keys_weight_range", "api_keys", type_="check")
    op.drop_column("api_keys", "max_in_flight")
    op.drop_column("api_keys", "weight")
    op.execute("UPDATE jobs SET state = 'cancelled' WHERE state = 'expired'")
    _final_states(STATES_BEFORE, FINAL_BEFORE)
    _held_index()
    op.drop_index("ix_jobs_queue_timeout", table_name="jobs")
    op.drop_constraint("jobs_priority_range", "jobs", type_="check")
    op.drop_column("jobs", "queue_timeout")
    op.drop_column("jobs", "priority")

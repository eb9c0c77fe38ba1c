"""clients that are told: job events wake listeners (NOTIFY), callback URLs on jobs and batches, a webhook
secret per key, and webhook deliveries with every attempt

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 04:00:00.000000

Each statement that inserts into `job_events` sends one `NOTIFY zolve_job_events` (delivered when it
commits, so a listener never reads an event before it is visible). A job that reaches a final state with a
callback URL gets its webhook delivery row from a trigger, in the transition's own transaction: whichever
code path finishes the job (worker, finalize, cancel, sweeper, cache hit), the delivery cannot be lost. The
same trigger adds a batch's delivery when its last job finishes, under a lock on the batch row so that two
last jobs finishing at once cannot both miss (nor both add) it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FINAL = "('succeeded', 'failed', 'cancelled')"

NOTIFY_EVENTS = """
CREATE FUNCTION zolve_notify_job_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('zolve_job_events', '');
    RETURN NULL;
END $$
"""

JOB_FINISHED = f"""
CREATE FUNCTION zolve_job_finished() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    batch_row batches%ROWTYPE;
BEGIN
    IF NEW.callback_url IS NOT NULL THEN
        INSERT INTO webhook_deliveries (owner_id, job_id, url)
        VALUES (NEW.owner_id, NEW.id, NEW.callback_url)
        ON CONFLICT DO NOTHING;
    END IF;
    SELECT b.* INTO batch_row FROM batches b JOIN batch_items i ON i.batch_id = b.id
    WHERE i.job_id = NEW.id AND b.callback_url IS NOT NULL LIMIT 1;
    IF FOUND THEN
        PERFORM 1 FROM batches WHERE id = batch_row.id FOR UPDATE;
        IF NOT EXISTS (
            SELECT 1 FROM batch_items i JOIN jobs j ON j.id = i.job_id
            WHERE i.batch_id = batch_row.id AND j.id <> NEW.id AND j.state NOT IN {FINAL}
        ) THEN
            INSERT INTO webhook_deliveries (owner_id, batch_id, url)
            VALUES (batch_row.owner_id, batch_row.id, batch_row.callback_url)
            ON CONFLICT DO NOTHING;
        END IF;
    END IF;
    RETURN NULL;
END $$
"""


def upgrade() -> None:
    op.add_column("api_keys", sa.Column("webhook_secret", sa.Text()))
    op.add_column("jobs", sa.Column("callback_url", sa.Text()))
    op.add_column("batches", sa.Column("callback_url", sa.Text()))
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("owner_id", sa.BigInteger(), sa.ForeignKey("api_keys.id"), nullable=False),
        sa.Column("job_id", UUID(as_uuid=True), sa.ForeignKey("jobs.id", ondelete="CASCADE")),
        sa.Column("batch_id", UUID(as_uuid=True), sa.ForeignKey("batches.id", ondelete="CASCADE")),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False, server_default=sa.text("'pending'")),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("enqueued_at", sa.DateTime(timezone=True)),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), server_default=sa.func.now()),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("state IN ('pending', 'delivered', 'failed')", name="webhook_deliveries_state"),
        sa.CheckConstraint("(job_id IS NULL) <> (batch_id IS NULL)", name="webhook_deliveries_target"),
    )
    op.create_index("ux_webhook_deliveries_job", "webhook_deliveries", ["job_id"], unique=True)
    op.create_index("ux_webhook_deliveries_batch", "webhook_deliveries", ["batch_id"], unique=True)
    op.create_index(
        "ix_webhook_deliveries_pending",
        "webhook_deliveries",
        ["next_attempt_at"],
        postgresql_where=sa.text("state = 'pending'"),
    )
    # what waits to be published: read after every send, so it stays as small as what waits
    op.create_index(
        "ix_webhook_deliveries_unsent",
        "webhook_deliveries",
        ["id"],
        postgresql_where=sa.text("state = 'pending' AND enqueued_at IS NULL"),
    )
    op.create_table(
        "webhook_attempts",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column(
            "delivery_id",
            sa.BigInteger(),
            sa.ForeignKey("webhook_deliveries.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("status_code", sa.Integer()),
        sa.Column("latency_ms", sa.Float()),
        sa.Column("error", sa.Text()),
    )
    op.create_index("ix_webhook_attempts_delivery", "webhook_attempts", ["delivery_id", "attempt"])
    op.execute(NOTIFY_EVENTS)
    op.execute(
        "CREATE TRIGGER notify_job_events AFTER INSERT ON job_events "
        "FOR EACH STATEMENT EXECUTE FUNCTION zolve_notify_job_events()"
    )
    op.execute(JOB_FINISHED)
    op.execute(
        "CREATE TRIGGER job_finished_update AFTER UPDATE OF state ON jobs FOR EACH ROW "
        f"WHEN (NEW.state IN {FINAL} AND OLD.state NOT IN {FINAL}) EXECUTE FUNCTION zolve_job_finished()"
    )
    op.execute(
        "CREATE TRIGGER job_finished_insert AFTER INSERT ON jobs FOR EACH ROW "
        f"WHEN (NEW.state IN {FINAL}) EXECUTE FUNCTION zolve_job_finished()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER job_finished_insert ON jobs")
    op.execute("DROP TRIGGER job_finished_update ON jobs")
    op.execute("DROP FUNCTION zolve_job_finished()")
    op.execute("DROP TRIGGER notify_job_events ON job_events")
    op.execute("DROP FUNCTION zolve_notify_job_events()")
    op.drop_table("webhook_attempts")
    op.drop_table("webhook_deliveries")
    op.drop_column("batches", "callback_url")
    op.drop_column("jobs", "callback_url")
    op.drop_column("api_keys", "webhook_secret")

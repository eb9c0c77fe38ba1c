"""a job retried after it finished gets a webhook delivery of its own: deliveries are keyed by the job and
its run

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 01:30:00.000000

`jobs.retries` counts the operator's retries of a finished job (store.dashboard.retry_job adds one);
the finish trigger stores it on the delivery as `job_run`, and the unique key is (job_id, job_run):
a redelivered finish of one run still adds nothing (ON CONFLICT DO NOTHING), a retried run's finish adds
its own delivery.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FINAL = "('succeeded', 'failed', 'cancelled')"

JOB_FINISHED = """
CREATE OR REPLACE FUNCTION zolve_job_finished() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    batch_row batches%ROWTYPE;
BEGIN
    IF NEW.callback_url IS NOT NULL THEN
        INSERT INTO webhook_deliveries (owner_id, job_id, url{run_column})
        VALUES (NEW.owner_id, NEW.id, NEW.callback_url{run_value})
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


def upgrade() -> None:
    op.add_column("jobs", sa.Column("retries", sa.Integer(), nullable=False, server_default=sa.text("0")))
    op.add_column(
        "webhook_deliveries", sa.Column("job_run", sa.Integer(), nullable=False, server_default=sa.text("0"))
    )
    op.drop_index("ux_webhook_deliveries_job", table_name="webhook_deliveries")
    op.create_index("ux_webhook_deliveries_job", "webhook_deliveries", ["job_id", "job_run"], unique=True)
    op.execute(JOB_FINISHED.format(run_column=", job_run", run_value=", NEW.retries", final=FINAL))


def downgrade() -> None:
    op.execute(JOB_FINISHED.format(run_column="", run_value="", final=FINAL))
    op.execute("DELETE FROM webhook_deliveries WHERE job_run > 0")
    op.drop_index("ux_webhook_deliveries_job", table_name="webhook_deliveries")
    op.create_index("ux_webhook_deliveries_job", "webhook_deliveries", ["job_id"], unique=True)
    op.drop_column("webhook_deliveries", "job_run")
    op.drop_column("jobs", "retries")

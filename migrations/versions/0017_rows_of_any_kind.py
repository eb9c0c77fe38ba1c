"""rows any kind can store: `boards` becomes `rows` (job, sort key, payload)

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 12:00:00.000000

A row was one 63-bit Planet X board code. It is now (job_id, key, payload): `key` orders the job's rows
(and is all a Planet X board needs: its code), `payload` holds whatever else the kind stores (bytes of the
kind's own format: packed bits, JSON, ...), NULL when the key says it all. Existing boards keep their
codes as keys: the table and its column are renamed and the new column is added without a default, so
no row is rewritten at any size.

The sector statistics that 0009 made for Planet X's boards are dropped: a kind now names the statistics
its filters need (kinds.base.Rows.statistics) and `store.rows.ensure_statistics` makes them at start-up.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: what 0009 made (and its downgrade drops): 18 sectors of 3 bits
BOARD_SECTORS = 18


def upgrade() -> None:
    for sector in range(BOARD_SECTORS):
        op.execute(f"DROP STATISTICS IF EXISTS boards_sector_{sector + 1}")
    op.rename_table("boards", "rows")
    op.alter_column("rows", "code", new_column_name="key")
    op.execute("ALTER INDEX boards_pkey RENAME TO rows_pkey")
    op.add_column("rows", sa.Column("payload", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    # the kinds' statistics (store.rows.ensure_statistics) go, and the rows only a payload can describe
    op.execute(
        "DO $$ DECLARE s record; BEGIN FOR s IN SELECT stxname FROM pg_statistic_ext "
        "WHERE stxrelid = 'rows'::regclass LOOP EXECUTE format('DROP STATISTICS %I', s.stxname); END LOOP; "
        "END $$"
    )
    op.execute("DELETE FROM rows WHERE payload IS NOT NULL")
    op.drop_column("rows", "payload")
    op.execute("ALTER INDEX rows_pkey RENAME TO boards_pkey")
    op.alter_column("rows", "key", new_column_name="code")
    op.rename_table("rows", "boards")
    for sector in range(BOARD_SECTORS):
        op.execute(
            f"CREATE STATISTICS boards_sector_{sector + 1} ON ((code >> {3 * sector}) & 7) FROM boards"
        )

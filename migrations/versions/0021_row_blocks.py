"""a job's keys without payloads are stored in blocks: one row per shard, not one per board

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28 09:30:00.000000

A Planet X board is its key alone, and an expert enumeration stores 1,138,272 of them, 3,000 per shard.
As a row each, PostgreSQL inserted every board into the heap and the primary key: 6.5 ms of a shard's
store against about 45 ms of solving, on every worker. A block is a shard's keys in one value, sorted,
big-endian 8 bytes each, with its first and last key: about 1 ms to store. When a sharded job's shards
are all stored the job's blocks, which interleave in the key, are merged into blocks that do not
(store.rows.compact), so that a page reads one block.

Existing keys without payloads, those of `planetx.enumerate` jobs (the only kind that stored such rows
when this was written), move into blocks of at most 16,384 keys; the payload rows stay in `rows`. The
statistics Planet X's filters needed on `rows` go: its filters now test blocks' keys in bulk.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: store.rows.BLOCK_KEYS when this was written
BLOCK_KEYS = 16_384

_KEY_ONLY_JOBS = "SELECT id FROM jobs WHERE kind = 'planetx.enumerate'"


#: the statistics Planet X's filters asked for on rows (kinds.base.Rows.statistics), one per sector
BOARD_SECTORS = 18


def upgrade() -> None:
    for sector in range(BOARD_SECTORS):
        op.execute(f"DROP STATISTICS IF EXISTS rows_boards_{sector + 1}")
    op.execute(
        """
        CREATE TABLE row_blocks (
            job_id uuid NOT NULL,
            first_key bigint NOT NULL,
            last_key bigint NOT NULL,
            count integer NOT NULL,
            keys bytea NOT NULL,
            PRIMARY KEY (job_id, first_key)
        )
        """
    )
    # out of line and never compressed: 8-byte keys barely compress, and trying cost every shard's store
    op.execute("ALTER TABLE row_blocks ALTER COLUMN keys SET STORAGE EXTERNAL")
    op.execute(
        f"""
        INSERT INTO row_blocks (job_id, first_key, last_key, count, keys)
        SELECT job_id, min(key), max(key), count(*), string_agg(int8send(key), ''::bytea ORDER BY key)
        FROM (
            SELECT job_id, key, (row_number() OVER (PARTITION BY job_id ORDER BY key) - 1) / {BLOCK_KEYS}
                AS block
            FROM rows WHERE payload IS NULL AND job_id IN ({_KEY_ONLY_JOBS})
        ) AS numbered
        GROUP BY job_id, block
        """
    )
    op.execute(f"DELETE FROM rows WHERE payload IS NULL AND job_id IN ({_KEY_ONLY_JOBS})")


def downgrade() -> None:
    op.execute(
        """
        INSERT INTO rows (job_id, key)
        SELECT job_id, ('x' || encode(substring(keys FROM n * 8 + 1 FOR 8), 'hex'))::bit(64)::bigint
        FROM row_blocks, generate_series(0, count - 1) AS n
        """
    )
    op.drop_table("row_blocks")

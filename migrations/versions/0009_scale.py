"""a million jobs: counters kept per transition (job and shard tallies, maintained by triggers), indexes for
every list filter, and a partial params-hash index

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 01:00:00.000000

The triggers only append to `job_tally_deltas` (and `shard_tally_deltas`): never updating a shared counter
row, concurrent transitions neither wait for each other nor deadlock. Inserts and deletes are counted per
statement (a purge chunk of 500 jobs, a bulk load: one delta row per kind, state and run-time bucket);
updates per row, only those that change a counted column. `store.tallies` reads the counters as the
compacted table plus the deltas, and folds the deltas into the compacted table from time to time.

The indexes are built in the migration's transaction (not CONCURRENTLY): at a million jobs each takes
a few seconds, during which writes to `jobs` wait.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: upper bounds (seconds) of the run-time histogram's buckets: store.metrics.RUN_SECONDS_BUCKETS
RUN_SECONDS_BUCKETS = (0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600)

# -1: no run time (not finished, or never started); else the first bucket whose bound is >= the run time
# (Prometheus' `le`), len(bounds) for +Inf. Plain CASE expressions: PostgreSQL inlines both functions.
RUN_SECONDS = """
CREATE FUNCTION zolve_run_seconds(started timestamptz, finished timestamptz) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT EXTRACT(epoch FROM finished - started) $$
"""
BUCKET_CASES = " ".join(f"WHEN seconds <= {bound} THEN {i}" for i, bound in enumerate(RUN_SECONDS_BUCKETS))
RUN_BUCKET = f"""
CREATE FUNCTION zolve_run_bucket(seconds numeric) RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (CASE WHEN seconds IS NULL THEN -1 {BUCKET_CASES} ELSE {len(RUN_SECONDS_BUCKETS)} END)::smallint
$$
"""

# A statement that inserts or deletes jobs (a batch of 500, a purge chunk, a bulk load) appends one delta
# row per (kind, state, bucket) it touched: statement triggers over its transition table. An update is
# counted row by row, and only when it changes what is counted: the trigger's column list and WHEN clause
# leave heartbeats and progress updates (most updates) without any function call.
JOB_CONTRIBUTIONS = """
    SELECT kind, state, zolve_run_bucket(zolve_run_seconds(started_at, finished_at)) AS run_bucket,
           {sign} AS jobs, {sign} * coalesce(zolve_run_seconds(started_at, finished_at), 0) AS run_seconds
    FROM {table}
"""
JOB_ROW = """
    ({row}.kind, {row}.state, zolve_run_bucket(zolve_run_seconds({row}.started_at, {row}.finished_at)),
     {sign}, {sign} * coalesce(zolve_run_seconds({row}.started_at, {row}.finished_at), 0))
"""
JOB_COUNTED = ("kind", "state", "started_at", "finished_at")
TALLY_JOBS = f"""
CREATE FUNCTION zolve_tally_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO job_tally_deltas (kind, state, run_bucket, jobs, run_seconds)
        VALUES {JOB_ROW.format(row="OLD", sign=-1)}, {JOB_ROW.format(row="NEW", sign=1)};
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO job_tally_deltas (kind, state, run_bucket, jobs, run_seconds)
        SELECT kind, state, run_bucket, sum(jobs), sum(run_seconds)
        FROM ({JOB_CONTRIBUTIONS.format(sign=1, table="new_rows")}) AS d GROUP BY kind, state, run_bucket;
    ELSE
        INSERT INTO job_tally_deltas (kind, state, run_bucket, jobs, run_seconds)
        SELECT kind, state, run_bucket, sum(jobs), sum(run_seconds)
        FROM ({JOB_CONTRIBUTIONS.format(sign=-1, table="old_rows")}) AS d GROUP BY kind, state, run_bucket;
    END IF;
    RETURN NULL;
END
$$
"""

SHARD_CONTRIBUTIONS = """
    SELECT state, {sign} AS shards,
           {sign} * CASE WHEN state = 'succeeded' THEN coalesce(row_count, 0) ELSE 0 END AS rows
    FROM {table}
"""
SHARD_ROW = """
    ({row}.state, {sign},
     {sign} * CASE WHEN {row}.state = 'succeeded' THEN coalesce({row}.row_count, 0) ELSE 0 END)
"""
SHARD_COUNTED = ("state", "row_count")
TALLY_SHARDS = f"""
CREATE FUNCTION zolve_tally_shards() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO shard_tally_deltas (state, shards, rows)
        VALUES {SHARD_ROW.format(row="OLD", sign=-1)}, {SHARD_ROW.format(row="NEW", sign=1)};
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO shard_tally_deltas (state, shards, rows)
        SELECT state, sum(shards), sum(rows)
        FROM ({SHARD_CONTRIBUTIONS.format(sign=1, table="new_rows")}) AS d GROUP BY state;
    ELSE
        INSERT INTO shard_tally_deltas (state, shards, rows)
        SELECT state, sum(shards), sum(rows)
        FROM ({SHARD_CONTRIBUTIONS.format(sign=-1, table="old_rows")}) AS d GROUP BY state;
    END IF;
    RETURN NULL;
END
$$
"""

# TRUNCATE fires no row change: the tallies start again from nothing
FORGET = """
CREATE FUNCTION zolve_forget_{name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- store.tallies.COMPACT_LOCK: a compaction running now would otherwise write its sums back after us
    PERFORM pg_advisory_xact_lock(134618979524972);
    DELETE FROM {name}_tallies;
    DELETE FROM {name}_tally_deltas;
    RETURN NULL;
END
$$
"""


def _tally_triggers(table: str, name: str, function: str, counted: tuple[str, ...]) -> None:
    op.execute(function)
    op.execute(FORGET.format(name=name))
    run = f"EXECUTE FUNCTION zolve_tally_{table}()"
    for event, rows in (("INSERT", "NEW TABLE AS new_rows"), ("DELETE", "OLD TABLE AS old_rows")):
        op.execute(
            f"CREATE TRIGGER tally_{table}_{event.lower()} AFTER {event} ON {table} "
            f"REFERENCING {rows} FOR EACH STATEMENT {run}"
        )
    changed = " OR ".join(f"OLD.{column} IS DISTINCT FROM NEW.{column}" for column in counted)
    op.execute(
        f"CREATE TRIGGER tally_{table}_update AFTER UPDATE OF {', '.join(counted)} ON {table} "
        f"FOR EACH ROW WHEN ({changed}) {run}"
    )
    op.execute(
        f"CREATE TRIGGER tally_{table}_truncate AFTER TRUNCATE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION zolve_forget_{name}()"
    )


def _drop_tally_triggers(table: str, name: str) -> None:
    for event in ("insert", "update", "delete", "truncate"):
        op.execute(f"DROP TRIGGER tally_{table}_{event} ON {table}")
    op.execute(f"DROP FUNCTION zolve_tally_{table}()")
    op.execute(f"DROP FUNCTION zolve_forget_{name}()")


# a board's code: 3 bits per sector (store.models.Board), up to 18 sectors; a page of boards filters on
# these fields in code order, and without statistics PostgreSQL guesses each field matches 1 row in 200,
# so that a page of a million boards with two filters looks like a handful: a full scan and a sort
# (100 ms) instead of the primary key in order (0.3 ms)
BOARD_SECTORS = 18


def _board_statistics() -> None:
    for sector in range(BOARD_SECTORS):
        op.execute(
            f"CREATE STATISTICS boards_sector_{sector + 1} ON ((code >> {3 * sector}) & 7) FROM boards"
        )


JOB_INDEXES = {
    # a client's list filters (owner first); one branch per state (store.listing), newest first
    "ix_jobs_owner_state_created": ["owner_id", "state", "created_at", "id"],
    "ix_jobs_owner_kind_state_created": ["owner_id", "kind", "state", "created_at", "id"],
    # an admin's (every owner's) filters
    "ix_jobs_state_created": ["state", "created_at", "id"],
    "ix_jobs_kind_state_created": ["kind", "state", "created_at", "id"],
}


def upgrade() -> None:
    op.create_table(
        "job_tallies",
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("run_bucket", sa.SmallInteger(), nullable=False),
        sa.Column("jobs", sa.BigInteger(), nullable=False),
        sa.Column("run_seconds", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "state", "run_bucket"),
    )
    op.create_table(
        "job_tally_deltas",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("run_bucket", sa.SmallInteger(), nullable=False),
        sa.Column("jobs", sa.BigInteger(), nullable=False),
        sa.Column("run_seconds", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "shard_tallies",
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("shards", sa.BigInteger(), nullable=False),
        sa.Column("rows", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("state"),
    )
    op.create_table(
        "shard_tally_deltas",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("shards", sa.BigInteger(), nullable=False),
        sa.Column("rows", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute(RUN_SECONDS)
    op.execute(RUN_BUCKET)
    # the triggers first: CREATE TRIGGER holds off writes to the table until this transaction commits, so
    # the counts taken next miss no transition
    _tally_triggers("jobs", "job", TALLY_JOBS, JOB_COUNTED)
    _tally_triggers("shards", "shard", TALLY_SHARDS, SHARD_COUNTED)
    op.execute(
        f"INSERT INTO job_tallies (kind, state, run_bucket, jobs, run_seconds) "
        f"SELECT kind, state, run_bucket, sum(jobs), sum(run_seconds) "
        f"FROM ({JOB_CONTRIBUTIONS.format(sign=1, table='jobs')}) AS d GROUP BY kind, state, run_bucket"
    )
    op.execute(
        f"INSERT INTO shard_tallies (state, shards, rows) SELECT state, sum(shards), sum(rows) "
        f"FROM ({SHARD_CONTRIBUTIONS.format(sign=1, table='shards')}) AS d GROUP BY state"
    )

    for name, columns in JOB_INDEXES.items():
        op.create_index(name, "jobs", columns, unique=False)
    # the cache looks up only jobs whose rows it can serve (rows_job_id set: a cacheable kind's stored
    # enumeration), and retention asks which jobs read another's rows: both partial, a few rows
    op.drop_index("ix_jobs_params_hash", table_name="jobs")
    op.create_index(
        "ix_jobs_params_hash",
        "jobs",
        ["params_hash"],
        unique=False,
        postgresql_where=sa.text("rows_job_id IS NOT NULL"),
    )
    op.create_index(
        "ix_jobs_rows_job",
        "jobs",
        ["rows_job_id"],
        unique=False,
        postgresql_where=sa.text("rows_job_id IS NOT NULL"),
    )
    _board_statistics()


def downgrade() -> None:
    for sector in range(BOARD_SECTORS):
        op.execute(f"DROP STATISTICS boards_sector_{sector + 1}")
    op.drop_index("ix_jobs_rows_job", table_name="jobs")
    op.drop_index("ix_jobs_params_hash", table_name="jobs")
    op.create_index("ix_jobs_params_hash", "jobs", ["params_hash"], unique=False)
    for name in JOB_INDEXES:
        op.drop_index(name, table_name="jobs")
    _drop_tally_triggers("shards", "shard")
    _drop_tally_triggers("jobs", "job")
    op.execute("DROP FUNCTION zolve_run_bucket(numeric)")
    op.execute("DROP FUNCTION zolve_run_seconds(timestamptz, timestamptz)")
    op.drop_table("shard_tally_deltas")
    op.drop_table("shard_tallies")
    op.drop_table("job_tally_deltas")
    op.drop_table("job_tallies")

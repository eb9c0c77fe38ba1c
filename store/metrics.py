"""Aggregates for monitoring, straight from PostgreSQL (the truth, whatever the broker)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.states import ShardState
from store.models import Job, Shard

#: upper bounds (seconds) of the job run-time histogram buckets
RUN_SECONDS_BUCKETS = (0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600)


def jobs_by_kind_and_state(session: Session) -> list[tuple[str, str, int]]:
    rows = session.execute(select(Job.kind, Job.state, func.count()).group_by(Job.kind, Job.state))
    return [(kind, state, count) for kind, state, count in rows]


def shards_by_state(session: Session) -> list[tuple[str, int]]:
    return [
        (state, count)
        for state, count in session.execute(select(Shard.state, func.count()).group_by(Shard.state))
    ]


def rows_written(session: Session) -> int:
    """Rows (boards) committed by finished shards."""
    return session.scalar(
        select(func.coalesce(func.sum(Shard.row_count), 0)).where(Shard.state == ShardState.SUCCEEDED)
    )


def run_seconds_histogram(session: Session) -> tuple[list[int], int, float]:
    """Finished jobs' run times: cumulative counts per bucket of RUN_SECONDS_BUCKETS, total count, sum."""
    seconds = func.extract("epoch", Job.finished_at - Job.started_at)
    finished = Job.finished_at.isnot(None) & Job.started_at.isnot(None)
    buckets = [func.count().filter(seconds <= bound) for bound in RUN_SECONDS_BUCKETS]
    row = session.execute(
        select(*buckets, func.count(), func.coalesce(func.sum(seconds), 0)).where(finished)
    ).one()
    return [int(n) for n in row[:-2]], int(row[-2]), float(row[-1])

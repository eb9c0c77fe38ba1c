"""The counters' reference: the same figures counted from every row (what /metrics scanned before the
counters), compared with the counters in one snapshot."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg.errors import SerializationFailure
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from tenacity import retry, retry_if_exception, stop_after_attempt

from core.states import ShardState
from store import metrics
from store.db import Database
from store.models import Job, Shard


@dataclass(frozen=True)
class Figures:
    jobs: list[tuple[str, str, int]]
    shards: list[tuple[str, int]]
    rows_written: int
    buckets: list[int]
    count: int
    seconds: float


def counted(session: Session) -> Figures:
    """Every figure by COUNT(*) and SUM over the rows."""
    jobs = session.execute(select(Job.kind, Job.state, func.count()).group_by(Job.kind, Job.state))
    shards = session.execute(select(Shard.state, func.count()).group_by(Shard.state))
    rows = session.scalar(
        select(func.coalesce(func.sum(Shard.row_count), 0)).where(Shard.state == ShardState.SUCCEEDED)
    )
    seconds = func.extract("epoch", Job.finished_at - Job.started_at)
    finished = Job.finished_at.isnot(None) & Job.started_at.isnot(None)
    buckets = [func.count().filter(seconds <= bound) for bound in metrics.RUN_SECONDS_BUCKETS]
    histogram = session.execute(
        select(*buckets, func.count(), func.coalesce(func.sum(seconds), 0)).where(finished)
    ).one()
    return Figures(
        jobs=sorted((kind, str(state), n) for kind, state, n in jobs),
        shards=sorted((str(state), n) for state, n in shards),
        rows_written=int(rows),
        buckets=[int(n) for n in histogram[:-2]],
        count=int(histogram[-2]),
        seconds=float(histogram[-1]),
    )


def kept(session: Session) -> Figures:
    """The same figures from the counters (as /metrics reads them)."""
    figures = metrics.figures(session)
    buckets, count, seconds = figures.run_seconds
    jobs = sorted((kind, str(state), n) for kind, state, n in figures.jobs)
    shards = sorted((str(state), n) for state, n in figures.shards)
    return Figures(jobs, shards, figures.rows_written, buckets, count, seconds)


def _serialization_failure(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError) and isinstance(exc.orig, SerializationFailure)


# reading the counters folds their deltas: a worker's fold committed after the snapshot was taken makes
# it fail to serialize, and it is read again, as PostgreSQL asks of a REPEATABLE READ transaction
@retry(retry=retry_if_exception(_serialization_failure), stop=stop_after_attempt(5), reraise=True)
def _read_both(db: Database) -> tuple[Figures, Figures]:
    with db.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with Session(conn) as session:
            both = counted(session), kept(session)
            session.commit()
    return both


def assert_counters_match(db: Database) -> Figures:
    """The counters equal the counts, read in one snapshot (REPEATABLE READ); returns them."""
    truth, counters = _read_both(db)
    assert counters.jobs == truth.jobs
    assert counters.shards == truth.shards
    assert counters.rows_written == truth.rows_written
    assert (counters.buckets, counters.count) == (truth.buckets, truth.count)
    assert abs(counters.seconds - truth.seconds) <= 1e-6 * max(1.0, truth.seconds)
    return truth

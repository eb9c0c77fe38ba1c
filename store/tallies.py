"""Counters that cost the same at any size: jobs by kind, state and run-time bucket, and shards by state
with the rows they stored, kept by PostgreSQL triggers in the same transaction as each change.

Every statement that inserts, updates or deletes jobs (or shards) appends what it changed to a deltas
table (migration 0009), so concurrent transitions never wait on a shared counter row. A count is the
compacted table plus the deltas not yet folded in; `compact` folds them, one compactor at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, Subquery, delete, func, literal_column, select, union_all
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from store.models import JobTally, JobTallyDelta, ShardTally, ShardTallyDelta

#: pg_try_advisory_xact_lock key: "zolve tallies"
COMPACT_LOCK = 0x7A6F_6C74_616C


@dataclass(frozen=True)
class JobCount:
    kind: str
    state: str
    #: -1: no run time (unfinished, or never started); else the run-time bucket (store.metrics)
    run_bucket: int
    jobs: int
    run_seconds: float


def _fold(
    session: Session, deltas: type, tallies: type, keys: tuple[str, ...], sums: tuple[str, ...]
) -> None:
    """Move the deltas this transaction sees into the compacted table, summed per key."""
    moved = delete(deltas).returning(*(getattr(deltas, name) for name in keys + sums)).cte("moved")
    summed = select(
        *(moved.c[name] for name in keys), *(func.sum(moved.c[name]).label(name) for name in sums)
    ).group_by(*(moved.c[name] for name in keys))
    # a data-modifying WITH must head the whole statement
    upsert = insert(tallies).from_select([*keys, *sums], summed).add_cte(moved, nest_here=True)
    upsert = upsert.on_conflict_do_update(
        index_elements=list(keys),
        set_={name: getattr(tallies, name) + upsert.excluded[name] for name in sums},
    )
    session.execute(upsert)


def compact(session: Session) -> bool:
    """Fold the deltas into the compacted tables (in the caller's transaction). False: another session is
    compacting right now (nothing to do then: its result is the same)."""
    if not session.scalar(select(func.pg_try_advisory_xact_lock(COMPACT_LOCK))):
        return False
    _fold(session, JobTallyDelta, JobTally, ("kind", "state", "run_bucket"), ("jobs", "run_seconds"))
    _fold(session, ShardTallyDelta, ShardTally, ("state",), ("shards", "rows"))
    return True


def _both(tallies: type, deltas: type, columns: tuple[str, ...]) -> Subquery:
    def part(table: type) -> Select[*tuple[Any, ...]]:
        return select(*(getattr(table, name) for name in columns))

    return union_all(part(tallies), part(deltas)).subquery()


def job_counts(session: Session) -> list[JobCount]:
    """Every (kind, state, run bucket) with jobs in it."""
    both = _both(JobTally, JobTallyDelta, ("kind", "state", "run_bucket", "jobs", "run_seconds"))
    keys = (both.c.kind, both.c.state, both.c.run_bucket)
    jobs = func.sum(both.c.jobs)
    rows = session.execute(
        select(*keys, jobs, func.sum(both.c.run_seconds)).group_by(*keys).having(jobs != 0).order_by(*keys)
    )
    return [JobCount(kind, state, bucket, int(n), float(s)) for kind, state, bucket, n, s in rows]


def shard_counts(session: Session) -> dict[str, tuple[int, int]]:
    """Per shard state: (shards, rows stored by them: nonzero for `succeeded` only)."""
    both = _both(ShardTally, ShardTallyDelta, ("state", "shards", "rows"))
    shards = func.sum(both.c.shards)
    rows = session.execute(
        select(both.c.state, shards, func.coalesce(func.sum(both.c.rows), literal_column("0")))
        .group_by(both.c.state)
        .having(shards != 0)
        .order_by(both.c.state)
    )
    return {state: (int(n), int(stored)) for state, n, stored in rows}

"""Retention: finished jobs older than a cutoff go, with their shards, events, rows and batch items.

A job stays while rows it stored are read by a job that stays (a cached copy shares its source's rows), or
while it is pinned (e.g. the newest complete enumeration, which other kinds read). Deletes run a chunk of
jobs per transaction, under an advisory lock, so that two purgers never work at once; a job's rows (a
million boards for an expert enumeration) go after it, ROWS_CHUNK at a time, each chunk its own short
transaction: a purge of any size never holds many locks for long, and polls (plain reads) never wait.

A job's rows and blocks have no foreign key to it (see store.models.Row): those whose job is gone go in the
next chunk, so a purge interrupted between a job and its rows leaves nothing behind for good."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass, fields
from datetime import datetime

from sqlalchemy import ColumnElement, Select, and_, delete, exists, func, not_, select, text
from sqlalchemy.orm import InstrumentedAttribute, Session, aliased

from core.states import FINAL_STATES
from store import rows, tallies
from store.db import Database, rowcount
from store.models import Batch, BatchItem, Job, JobEvent, Row, RowBlock, Shard

CHUNK = 500
ROWS_CHUNK = rows.DELETE_CHUNK
#: pg_try_advisory_xact_lock key: "zolve purge"
PURGE_LOCK = 0x7A6F_6C76_6570


@dataclass
class PurgeReport:
    jobs: int = 0
    shards: int = 0
    events: int = 0
    rows: int = 0
    batches: int = 0
    #: expired jobs kept because they are pinned or their rows are still read
    kept: int = 0

    def add(self, other: PurgeReport) -> None:
        for name in (f.name for f in fields(self)):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _finished_before(job: type[Job], before: datetime) -> ColumnElement[bool]:
    return and_(job.state.in_(FINAL_STATES), job.finished_at < before)


def _expired(before: datetime, pinned: Collection[uuid.UUID]) -> ColumnElement[bool]:
    """Jobs that go: finished before the cutoff, not pinned, and no job that stays reads their rows."""
    reader = aliased(Job)
    read_by_a_job_that_stays = exists().where(
        reader.rows_job_id == Job.id, reader.id != Job.id, not_(_finished_before(reader, before))
    )
    conditions = [_finished_before(Job, before), ~read_by_a_job_that_stays]
    if pinned:
        conditions.append(Job.id.not_in(list(pinned)))
    return and_(*conditions)


def _counts(session: Session, ids: list[uuid.UUID] | Select[uuid.UUID]) -> PurgeReport:
    """What deleting these jobs (a list, or a query of their ids) deletes."""

    def count(column: InstrumentedAttribute[uuid.UUID]) -> int:
        return session.scalar(select(func.count()).where(column.in_(ids))) or 0

    return PurgeReport(
        jobs=count(Job.id),
        shards=count(Shard.job_id),
        events=count(JobEvent.job_id),
        rows=count(Row.job_id)
        + (session.scalar(select(func.sum(RowBlock.count)).where(RowBlock.job_id.in_(ids))) or 0),
    )


def _expired_batches(before: datetime, pinned: Collection[uuid.UUID]) -> ColumnElement[bool]:
    """Batches created before the cutoff none of whose jobs stays."""
    staying = (
        select(BatchItem.batch_id)
        .join(Job, Job.id == BatchItem.job_id)
        .where(BatchItem.batch_id == Batch.id, not_(_expired(before, pinned)))
    )
    return and_(Batch.created_at < before, ~staying.exists())


def purge(
    db: Database,
    before: datetime,
    pinned: Collection[uuid.UUID],
    dry_run: bool = False,
    *,
    chunk: int = CHUNK,
    rows_chunk: int = ROWS_CHUNK,
) -> PurgeReport:
    """Delete (or, dry, count) what expired before `before`, `chunk` jobs (or batches) and `rows_chunk`
    rows per transaction. Returns what went, or would go."""
    report = PurgeReport()
    with db.session() as session:
        expired_ids = select(Job.id).where(_expired(before, pinned))
        finished_before = select(func.count()).where(_finished_before(Job, before))
        report.kept = (session.scalar(finished_before) or 0) - (
            session.scalar(select(func.count()).select_from(expired_ids.subquery())) or 0
        )
        if dry_run:
            report.add(_counts(session, expired_ids))  # a subquery: any number of jobs
            report.batches = session.scalar(select(func.count()).where(_expired_batches(before, pinned))) or 0
            return report
    report.rows += _delete_orphan_rows(db, rows_chunk)  # left by a purge that was interrupted
    while True:
        with db.session() as session:
            if not _locked(session):
                return report  # another purger is at work
            ids = list(session.scalars(select(Job.id).where(_expired(before, pinned)).limit(chunk)))
            if not ids:
                break
            gone = _counts(session, ids)
            # shards, events, batch items and result items go with their job (ON DELETE CASCADE)
            session.execute(delete(Job).where(Job.id.in_(ids)))
        gone.rows = _delete_orphan_rows(db, rows_chunk)
        report.add(gone)
    while True:
        with db.session() as session:
            if not _locked(session):
                return report
            ids = list(session.scalars(select(Batch.id).where(_expired_batches(before, pinned)).limit(chunk)))
            if not ids:
                break
            report.batches += rowcount(session.execute(delete(Batch).where(Batch.id.in_(ids))))
    with db.session() as session:
        tallies.compact(session)  # the purge's deltas, folded now: the next scrape finds few
    return report


def _locked(session: Session) -> bool:
    return bool(session.scalar(select(func.pg_try_advisory_xact_lock(PURGE_LOCK))))


# the jobs that have rows (or blocks: {table}), one index probe each (a loose index scan of the primary
# key), whose job row is gone
_ORPHAN_OWNERS = """
    WITH RECURSIVE owners(job_id) AS (
        (SELECT job_id FROM {table} ORDER BY job_id LIMIT 1)
        UNION ALL
        SELECT (SELECT r.job_id FROM {table} r WHERE r.job_id > owners.job_id ORDER BY r.job_id LIMIT 1)
        FROM owners WHERE owners.job_id IS NOT NULL
    )
    SELECT job_id FROM owners
    WHERE job_id IS NOT NULL AND NOT EXISTS (SELECT FROM jobs WHERE jobs.id = owners.job_id)
        -- a cache hit made between the chunks that deleted a source and its copies still serves them
        AND NOT EXISTS (SELECT FROM jobs WHERE jobs.rows_job_id = owners.job_id)
    """


def _delete_orphan_rows(db: Database, rows_chunk: int) -> int:
    """Delete the rows of jobs that are gone, `rows_chunk` rows per transaction. Returns how many."""
    with db.session() as session:
        orphans = {
            job_id
            for table in ("rows", "row_blocks")
            for job_id in session.scalars(text(_ORPHAN_OWNERS.format(table=table)))
        }
    deleted = 0
    for job_id in orphans:
        done, complete = rows.delete_rows(db, job_id, _locked, rows_chunk)
        deleted += done
        if not complete:
            return deleted  # another purger is at work
    return deleted

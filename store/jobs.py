"""Job state transitions. Every transition is one SQL statement guarded by the state it expects
(compare-and-set), so duplicate deliveries, dead workers and racing cancels cannot corrupt a job.

    queued → running → succeeded | failed | cancelled
       ↘ expired     ↘ cancelling → cancelled
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, NamedTuple, cast

from sqlalchemy import ColumnElement, Table, and_, func, insert, inspect, or_, select, text, true, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, make_transient_to_detached

from core.errors import ErrorType, JobError
from core.events import EventName, entered
from core.states import JobState, ShardState
from store import dispatch, events, listing, shards
from store.listing import Page
from store.models import Batch, Job, Shard


class IdempotencyConflict(Exception):
    """The Idempotency-Key was already used for a different request."""


def params_hash(kind: str, params: dict[str, Any]) -> str:
    canonical = json.dumps({"kind": kind, "params": params}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _lease_until(seconds: float) -> Any:
    return func.now() + timedelta(seconds=seconds)


# -- API side -------------------------------------------------------------------------------------
def create_job(
    session: Session,
    *,
    owner_id: int,
    kind: str,
    params: dict[str, Any],
    time_limit: float,
    priority: int = 0,
    queue_timeout: float | None = None,
    idempotency_key: str | None = None,
    callback_url: str | None = None,
    trace_parent: str | None = None,
) -> tuple[Job, bool]:
    """Insert a queued job; returns (job, created). A repeated Idempotency-Key returns the first job."""
    digest = params_hash(kind, params)
    if idempotency_key is not None:
        existing = _job_by_idempotency_key(session, owner_id, idempotency_key)
        if existing is not None:
            return _replay(existing, digest, time_limit, priority, queue_timeout), False
    # held until store.dispatch releases it to the broker within its client's window
    values = job_values(
        owner_id,
        kind,
        params,
        digest,
        time_limit,
        priority=priority,
        queue_timeout=queue_timeout,
        idempotency_key=idempotency_key,
        callback_url=callback_url,
        trace_parent=trace_parent,
    )
    if idempotency_key is None:  # nothing unique to race on: no savepoint (two round trips fewer)
        job = _inserted_job(session, values)
    else:
        try:
            with session.begin_nested():
                job = _inserted_job(session, values)
        except IntegrityError:
            # a concurrent request with the same key won the race
            existing = _job_by_idempotency_key(session, owner_id, idempotency_key)
            if existing is None:
                raise
            return _replay(existing, digest, time_limit, priority, queue_timeout), False
    events.record(session, job.id, EventName.CREATED, actor_key_id=owner_id)
    return job, True


#: a job's INSERT, built and compiled once: its values are parameters (an INSERT built with them would be
#: a new statement to build, key and compile per submit, a third of a millisecond of CPU); it returns the
#: whole row (its server defaults: created_at, ...), so no read follows it
_INSERT_JOB = insert(cast(Table, Job.__table__)).returning(*Job.__table__.c)
#: (the Job attribute, its column's name in the returned row)
_JOB_FIELDS = [(attribute.key, attribute.columns[0].key) for attribute in inspect(Job).column_attrs]


def _inserted_job(session: Session, values: dict[str, Any]) -> Job:
    """Insert one job; returns it as a Job in the session (as an ORM INSERT would leave it: changes made to
    it are flushed with the transaction), built from the returned row without another statement."""
    row = session.execute(_INSERT_JOB, values).one()._mapping
    job = Job(**{attribute: row[column] for attribute, column in _JOB_FIELDS})
    make_transient_to_detached(job)
    session.add(job)
    return job


def job_row(
    owner_id: int, kind: str, params: dict[str, Any], digest: str, time_limit: float, **columns: Any
) -> Job:
    return Job(**job_values(owner_id, kind, params, digest, time_limit, **columns))


def job_values(
    owner_id: int, kind: str, params: dict[str, Any], digest: str, time_limit: float, **columns: Any
) -> dict[str, Any]:
    """A new queued job's columns (the rest are the table's defaults)."""
    return {
        "id": uuid.uuid4(),
        "owner_id": owner_id,
        "kind": kind,
        "params": params,
        "params_hash": digest,
        "time_limit": time_limit,
        "state": JobState.QUEUED,
        **columns,
    }


def _job_by_idempotency_key(session: Session, owner_id: int, key: str | None) -> Job | None:
    return session.scalar(select(Job).where(Job.owner_id == owner_id, Job.idempotency_key == key))


def _replay(job: Job, digest: str, time_limit: float, priority: int, queue_timeout: float | None) -> Job:
    asked = (digest, time_limit, priority, queue_timeout)
    if (job.params_hash, job.time_limit, job.priority, job.queue_timeout) != asked:
        raise IdempotencyConflict("this Idempotency-Key was already used with a different request body")
    return job


class CacheHit(NamedTuple):
    job: Job
    #: copied from a job of the same owner (else nothing may say it was a copy)
    own: bool


def create_cached_job(
    session: Session,
    *,
    owner_id: int,
    kind: str,
    params: dict[str, Any],
    time_limit: float,
    callback_url: str | None = None,
    idempotency_key: str | None = None,
    priority: int = 0,
    queue_timeout: float | None = None,
) -> CacheHit | None:
    """A succeeded copy of the latest identical job (same kind and params), sharing its stored rows.

    A copy of another client's job reads as fresh work: no trace of the job it came from (its id, a
    `cached` mark) in the copy's progress or events. With an Idempotency-Key the copy carries it (and the
    request's priority and queue_timeout, which a replay must match); None if a concurrent request took
    the key first (create_job then replays that one's job)."""
    digest = params_hash(kind, params)
    source = session.scalar(
        select(Job)
        .where(
            Job.kind == kind,
            Job.params_hash == digest,
            Job.state == JobState.SUCCEEDED,
            Job.rows_job_id.isnot(None),
        )
        .order_by(Job.finished_at.desc())
        .limit(1)
    )
    if source is None:
        return None
    own = source.owner_id == owner_id
    job = job_row(
        owner_id,
        kind,
        params,
        digest,
        time_limit,
        state=JobState.SUCCEEDED,
        result=source.result,
        rows_job_id=source.rows_job_id,
        shards_total=source.shards_total,
        shards_done=source.shards_done,
        rows_done=source.rows_done,
        progress={"cached": True} if own else None,
        callback_url=callback_url,
        idempotency_key=idempotency_key,
        priority=priority,
        queue_timeout=queue_timeout,
        started_at=func.now(),
        finished_at=func.now(),
    )
    if idempotency_key is None:
        session.add(job)
        session.flush()
    else:
        try:
            with session.begin_nested():  # a savepoint: a race on the key leaves the transaction usable
                session.add(job)
                session.flush()
        except IntegrityError:
            return None
    cached = {"cached_from": str(source.id)} if own else None
    events.record(session, job.id, EventName.CREATED, actor_key_id=owner_id, detail=cached)
    events.record(session, job.id, EventName.SUCCEEDED, detail=cached)
    session.refresh(job)
    return CacheHit(job, own)


def mark_unsent(
    session: Session,
    *,
    job_ids: Sequence[uuid.UUID] = (),
    shard_ids: Sequence[int] = (),
    finalize_ids: Sequence[uuid.UUID] = (),
) -> None:
    """Messages the broker refused: their rows say so, and the next sweep sends them (whatever the
    broker's queue holds meanwhile)."""
    if job_ids:
        session.execute(
            update(Job).where(Job.id.in_(job_ids), Job.state == JobState.QUEUED).values(enqueued_at=None)
        )
    if shard_ids:
        session.execute(
            update(Shard)
            .where(Shard.id.in_(shard_ids), Shard.state == ShardState.QUEUED)
            .values(enqueued_at=None)
        )
    if finalize_ids:
        session.execute(update(Job).where(Job.id.in_(finalize_ids)).values(finalize_enqueued_at=None))


def forget_published(session: Session) -> None:
    """The broker lost every message (e.g. Redis restarted without persistence): whatever waits for
    one is marked unsent, so the next sweep sends it again at once. Duplicates are harmless: every claim
    is a compare-and-set."""
    session.execute(
        update(Job).where(Job.state == JobState.QUEUED, Job.enqueued_at.isnot(None)).values(enqueued_at=None)
    )
    session.execute(
        update(Shard)
        .where(
            Shard.state == ShardState.QUEUED,
            Shard.enqueued_at.isnot(None),
            Shard.job_id.in_(select(Job.id).where(Job.state == JobState.RUNNING)),
        )
        .values(enqueued_at=None)
    )
    session.execute(
        update(Job)
        .where(shards.awaiting_finalize(), Job.finalize_enqueued_at.isnot(None))
        .values(finalize_enqueued_at=None)
    )


def lock_owner(session: Session, owner_id: int) -> None:
    """Hold the owner's lock until this transaction ends (dispatch.lock_owners: the lock its releases
    take): a count of its jobs taken after this sees every job a concurrent submit of the same owner
    inserted, so a quota check and its insert are one step, and a release of the owner's work in the same
    transaction is already locked."""
    dispatch.lock_owners(session, [owner_id])


def idempotency_key_used(session: Session, owner_id: int, key: str, *, batch: bool) -> bool:
    """Whether the owner made a job (or with `batch`, a batch) under this Idempotency-Key."""
    table = Batch if batch else Job
    found = select(table.id).where(table.owner_id == owner_id, table.idempotency_key == key).limit(1)
    return session.scalar(found) is not None


def unfinished_count(session: Session, owner_id: int) -> int:
    """The client's jobs not yet finished (queued, running or cancelling)."""
    unfinished = (JobState.QUEUED, JobState.RUNNING, JobState.CANCELLING)
    return (
        session.scalar(select(func.count()).where(Job.owner_id == owner_id, Job.state.in_(unfinished))) or 0
    )


def short_jobs(session: Session, job_ids: Collection[uuid.UUID], within: float) -> set[uuid.UUID]:
    """Those of the jobs that asked for at most `within` seconds (see Settings.short_job_seconds)."""
    if not job_ids or within <= 0:
        return set()
    return set(session.scalars(select(Job.id).where(Job.id.in_(list(job_ids)), Job.time_limit <= within)))


def get_job(session: Session, job_id: uuid.UUID, owner_id: int | None) -> Job | None:
    """The job, if `owner_id` may see it (None = admin, sees every job)."""
    query = select(Job).where(Job.id == job_id)
    if owner_id is not None:
        query = query.where(Job.owner_id == owner_id)
    return session.scalar(query)


def get_jobs(session: Session, job_ids: Collection[uuid.UUID]) -> list[Job]:
    """Those of these jobs that exist, in one query (whoever owns them)."""
    return list(session.scalars(select(Job).where(Job.id.in_(list(job_ids)))))


def list_jobs(
    session: Session,
    *,
    owner_id: int | None,
    states: list[str] | None = None,
    kinds: list[str] | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> Page:
    """Newest first, keyset-paginated on (created_at, id) (see store.listing)."""
    where = listing.JobFilter(states=states or (), kinds=kinds or (), owner_id=owner_id)
    return listing.find_jobs(session, where, limit=limit, cursor=cursor)


def request_cancel(session: Session, job: Job, *, actor_key_id: int | None = None) -> Job:
    """Queued jobs are cancelled at once; running ones are flagged and their worker interrupts Z3.
    `actor_key_id`: the key that asked, for the job's history."""
    request_cancels(session, [job.id], actor_key_id=actor_key_id)
    session.refresh(job)
    return job


def request_cancels(
    session: Session, job_ids: Sequence[uuid.UUID], *, actor_key_id: int | None = None
) -> None:
    """request_cancel for many jobs (a batch's), in a few statements whatever their number."""
    if not job_ids:
        return
    cancelled = session.scalars(
        update(Job)
        .where(Job.id.in_(job_ids), Job.state == JobState.QUEUED)
        .values(state=JobState.CANCELLED, cancel_requested=True, finished_at=func.now())
        .returning(Job.id),
        execution_options={"synchronize_session": False},
    ).all()
    cancelling = session.scalars(
        update(Job)
        .where(Job.id.in_(job_ids), Job.state == JobState.RUNNING)
        .values(state=JobState.CANCELLING, cancel_requested=True)
        .returning(Job.id),
        execution_options={"synchronize_session": False},
    ).all()
    events.record_many(
        session,
        [(job_id, EventName.CANCELLED) for job_id in cancelled]
        + [(job_id, EventName.CANCEL_REQUESTED) for job_id in cancelling],
        actor_key_id=actor_key_id,
    )
    # sharded jobs: queued shards never start, running ones see the flag in their heartbeat
    shards.cancel_queued_shards(session, job_ids)
    now_cancelling = select(Job.id).where(Job.id.in_(job_ids), Job.state == JobState.CANCELLING)
    for job_id in session.scalars(now_cancelling).all():
        shards.settle_cancellation(session, job_id)


# -- worker side ----------------------------------------------------------------------------------
def claim(
    session: Session, job_id: uuid.UUID, worker: str, lease_seconds: float, max_attempts: int | None = None
) -> Job | None:
    """Take the job if it is queued (and not past its queue timeout: the sweeper ends it), or running
    under a lease that expired (and, given `max_attempts`, with attempts left: a redelivered poison job
    is then left to the sweeper, which fails it). None: someone else has it, it is finished, or it was
    cancelled; the message then does nothing."""
    attempts_left = Job.attempts < max_attempts if max_attempts is not None else true()
    claimed = session.scalar(
        update(Job)
        .where(
            Job.id == job_id,
            Job.cancel_requested.is_(False),
            or_(
                and_(Job.state == JobState.QUEUED, ~_past_queue_timeout()),
                and_(Job.state == JobState.RUNNING, Job.lease_expires_at < func.now(), attempts_left),
            ),
        )
        .values(
            state=JobState.RUNNING,
            lease_owner=worker,
            lease_expires_at=_lease_until(lease_seconds),
            heartbeat_at=func.now(),
            attempts=Job.attempts + 1,
            started_at=func.coalesce(Job.started_at, func.now()),
        )
        .returning(Job)
    )
    if claimed is not None:
        events.record(session, job_id, EventName.RUNNING, attempt=claimed.attempts, detail={"worker": worker})
    return claimed


def heartbeat(
    session: Session,
    job_id: uuid.UUID,
    worker: str,
    lease_seconds: float,
    progress: dict[str, Any] | None,
    *,
    changed: bool = False,
) -> bool | None:
    """Extend the lease and store progress (`changed`: it differs from the last stored, and goes into the
    job's history as a `progress` event). Returns whether a cancel was requested; None if the lease was
    lost (the sweeper gave the job to someone else)."""
    values: dict[str, Any] = {"heartbeat_at": func.now(), "lease_expires_at": _lease_until(lease_seconds)}
    if progress is not None:
        values["progress"] = progress
    stop = session.scalar(
        update(Job)
        .where(
            Job.id == job_id,
            Job.lease_owner == worker,
            Job.state.in_((JobState.RUNNING, JobState.CANCELLING)),
        )
        .values(**values)
        .returning(Job.cancel_requested)
    )
    if stop is not None and changed and progress is not None:
        events.record(session, job_id, EventName.PROGRESS, detail=progress)
    return stop


def finish(
    session: Session,
    job_id: uuid.UUID,
    worker: str,
    *,
    state: JobState,
    result: dict[str, Any] | None = None,
    error: JobError | None = None,
    progress: dict[str, Any] | None = None,
    rows_stored: int | None = None,
) -> bool:
    """Store the outcome and the final state in one statement, only while we still hold the lease.
    `rows_stored`: the job stored that many rows (a kind with rows, solved whole), which it serves."""
    values: dict[str, Any] = {
        "state": state,
        "result": result,
        "error": error.to_json() if error is not None else None,
        "finished_at": func.now(),
        "lease_owner": None,
        "lease_expires_at": None,
    }
    if progress is not None:
        values["progress"] = progress
    if rows_stored is not None:
        values.update(rows_done=rows_stored, rows_job_id=Job.id)
    attempt = session.scalar(
        update(Job)
        .where(
            Job.id == job_id,
            Job.lease_owner == worker,
            Job.state.in_((JobState.RUNNING, JobState.CANCELLING)),
        )
        .values(**values)
        .returning(Job.attempts)
    )
    if attempt is None:
        return False
    detail = error.event_detail() if error is not None else None
    events.record(session, job_id, entered(state), attempt=attempt, detail=detail)
    return True


def _past_queue_timeout() -> ColumnElement[bool]:
    """A job that never started and has waited longer than its queue_timeout (ix_jobs_queue_timeout)."""
    return and_(
        Job.queue_timeout.is_not(None),
        Job.started_at.is_(None),
        Job.created_at + Job.queue_timeout * text("interval '1 second'") < func.now(),
    )


def expire_overdue(session: Session, batch: int = 500) -> list[uuid.UUID]:
    """End the queued jobs not started within their queue_timeout: `expired`, without running."""
    overdue = (
        select(Job.id)
        .where(Job.state == JobState.QUEUED, _past_queue_timeout())
        .order_by(Job.created_at)
        .limit(batch)
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    error = JobError(ErrorType.QUEUE_TIMEOUT, "not started within its queue_timeout")
    expired = session.execute(
        update(Job)
        .where(Job.id.in_(overdue), Job.state == JobState.QUEUED)
        .values(state=JobState.EXPIRED, finished_at=func.now(), error=error.to_json())
        .returning(Job.id, Job.queue_timeout)
    ).all()
    for job_id, queue_timeout in expired:
        events.record(session, job_id, EventName.EXPIRED, detail={"queue_timeout": queue_timeout})
    return [job_id for job_id, _ in expired]


@dataclass(frozen=True)
class SweepReport:
    to_enqueue: list[uuid.UUID]
    failed: list[uuid.UUID]
    cancelled: list[uuid.UUID]
    #: of to_enqueue, the jobs whose message was sent long ago (the others' worker died)
    resent: int = 0
    #: queued jobs not started within their queue_timeout, ended without running
    expired: list[uuid.UUID] = field(default_factory=list)


def sweep(
    session: Session,
    *,
    max_attempts: int,
    requeue_after: float | None,
    batch: int = 500,
) -> SweepReport:
    """Recover what dead workers and lost messages left behind. Safe to run from many workers at once:
    rows are locked with SKIP LOCKED and each transition is guarded by the state it expects.

    Queued jobs published more than `requeue_after` seconds ago (None: not judged) and not claimed since
    are sent again: their message was lost (a broker that dropped it, a worker that died between taking
    it and claiming the row), or waits behind other work, where the second wake-up does nothing. The rows
    alone decide: the broker's contents are never read. Queued jobs never sent are held for
    store.dispatch, which releases them in turn."""
    expired = list(
        session.scalars(
            select(Job)
            .where(Job.state.in_((JobState.RUNNING, JobState.CANCELLING)), Job.lease_expires_at < func.now())
            .limit(batch)
            .with_for_update(skip_locked=True)
        )
    )
    failed, cancelled, requeued = [], [], []
    for job in expired:
        lost = {"reason": "lease expired", "worker": job.lease_owner}
        if job.state == JobState.CANCELLING:
            job.state, job.finished_at = JobState.CANCELLED, func.now()
            cancelled.append(job.id)
        elif job.attempts >= max_attempts:
            job.state, job.finished_at = JobState.FAILED, func.now()
            error = JobError(
                ErrorType.WORKER_LOST,
                f"the worker running this job stopped responding {job.attempts} times; "
                f"giving up after {max_attempts} attempts",
            )
            job.error = error.to_json()
            failed.append(job.id)
            lost.update(error.event_detail())
        else:
            job.state, job.enqueued_at = JobState.QUEUED, None
            requeued.append(job.id)
        job.lease_owner, job.lease_expires_at = None, None
        event = EventName.REQUEUED if job.state == JobState.QUEUED else entered(job.state)
        events.record(session, job.id, event, attempt=job.attempts, detail=lost)

    overdue = expire_overdue(session, batch)  # before the re-sends: an expired job is not woken
    stale = list(
        session.scalars(
            select(Job.id)
            .where(
                Job.state == JobState.QUEUED,
                shards.sent_long_ago(Job.enqueued_at, requeue_after),
            )
            .order_by(Job.created_at)
            .limit(batch)
            .with_for_update(skip_locked=True)
        )
    )
    to_enqueue = list(dict.fromkeys(requeued + stale))
    if to_enqueue:
        session.execute(update(Job).where(Job.id.in_(to_enqueue)).values(enqueued_at=func.now()))
    return SweepReport(
        to_enqueue=to_enqueue, failed=failed, cancelled=cancelled, resent=len(stale), expired=overdue
    )

"""What the admin dashboard reads and does, straight from PostgreSQL (whatever the broker): the overview's
aggregates, the jobs table, a job's page, and the operators' actions (retry, requeue a shard)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from core.errors import JobError
from core.events import EventName
from core.states import JobState, ShardState
from store import events, heartbeats
from store.models import ApiKey, Job, JobEvent, ResultItem, Shard, Worker
from store.tallies import JobCount, compact, job_counts

CHART_MINUTES = 60
#: shards drawn in a job's grid (an expert enumeration has a few thousand)
MAX_SHARD_CELLS = 10_000
#: queued or running shards listed with a requeue button
MAX_ACTIVE_SHARDS = 50


class ActionRefused(Exception):
    """The action does not apply to the job or shard as it is now (the message says why)."""


# -- overview -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class QueueDepth:
    kind: str
    jobs: int
    shards: int


@dataclass(frozen=True)
class Lease:
    job_id: uuid.UUID
    kind: str
    shard_key: str | None


@dataclass(frozen=True)
class WorkerStatus:
    name: str
    hostname: str
    pid: int
    node: str | None
    started_at: datetime
    heartbeat_at: datetime
    running: list[Lease] = field(default_factory=list)


@dataclass(frozen=True)
class Minute:
    start: datetime
    jobs: int
    boards: int


@dataclass(frozen=True)
class Overview:
    states: dict[str, int]
    queues: list[QueueDepth]
    workers: list[WorkerStatus]
    minutes: list[Minute]
    #: failed / (succeeded + failed): over the last hour, and over all time; None when nothing finished
    failure_rate_hour: float | None
    failure_rate_all: float | None


def overview(session: Session, *, alive_within: float) -> Overview:
    """The counts come from the counters kept per transition (store.tallies), the same as /metrics; the
    last hour's figures from the jobs and shards that finished in it (an index on finished_at)."""
    compact(session)
    counts = job_counts(session)
    states: dict[str, int] = defaultdict(int)
    for count in counts:
        states[count.state] += count.jobs
    hour = _pairs(
        session.execute(
            select(Job.state, func.count())
            .where(Job.finished_at >= func.now() - timedelta(hours=1))
            .group_by(Job.state)
        )
    )
    return Overview(
        states=dict(states),
        queues=queue_depths(session, counts),
        workers=workers_alive(session, alive_within),
        minutes=per_minute(session),
        failure_rate_hour=_failure_rate(hour),
        failure_rate_all=_failure_rate(states),
    )


def _pairs(result: Any) -> dict[Any, Any]:
    """A two-column result as a dict (a Result has .keys(), which dict() would take for a mapping's)."""
    return dict(result.all())


def _failure_rate(states: dict[str, int]) -> float | None:
    failed, succeeded = states.get(JobState.FAILED, 0), states.get(JobState.SUCCEEDED, 0)
    return failed / (failed + succeeded) if failed + succeeded else None


def queue_depths(session: Session, counts: list[JobCount]) -> list[QueueDepth]:
    """Per kind: queued jobs (from the counters), and queued shards of running jobs (the work waiting for a
    worker)."""
    jobs: dict[str, int] = defaultdict(int)
    for count in counts:
        if count.state == JobState.QUEUED and count.jobs:
            jobs[count.kind] += count.jobs
    shards = _pairs(
        session.execute(
            select(Job.kind, func.count())
            .join(Shard, Shard.job_id == Job.id)
            .where(Shard.state == ShardState.QUEUED, Job.state == JobState.RUNNING)
            .group_by(Job.kind)
        )
    )
    return [QueueDepth(kind, jobs.get(kind, 0), shards.get(kind, 0)) for kind in sorted({*jobs, *shards})]


def workers_alive(session: Session, within: float) -> list[WorkerStatus]:
    """Processes that heartbeat in the last `within` seconds, each with the jobs and shards it leases."""
    rows = session.scalars(
        select(Worker).where(heartbeats.alive(within)).order_by(Worker.hostname, Worker.node, Worker.pid)
    ).all()
    names = [row.name for row in rows]
    leases: dict[str, list[Lease]] = {name: [] for name in names}
    for owner, job_id, kind in session.execute(
        select(Job.lease_owner, Job.id, Job.kind).where(
            Job.lease_owner.in_(names), Job.state.in_((JobState.RUNNING, JobState.CANCELLING))
        )
    ):
        assert owner is not None
        leases[owner].append(Lease(job_id, kind, None))
    for owner, job_id, kind, key in session.execute(
        select(Shard.lease_owner, Job.id, Job.kind, Shard.key)
        .join(Job, Job.id == Shard.job_id)
        .where(Shard.lease_owner.in_(names), Shard.state == ShardState.RUNNING)
    ):
        assert owner is not None
        leases[owner].append(Lease(job_id, kind, key))
    return [
        WorkerStatus(r.name, r.hostname, r.pid, r.node, r.started_at, r.heartbeat_at, leases[r.name])
        for r in rows
    ]


def per_minute(session: Session) -> list[Minute]:
    """Jobs finished and boards written in each of the last CHART_MINUTES minutes (the current one last)."""
    now: datetime = session.execute(select(func.date_trunc("minute", func.now()))).scalar_one()
    since = now - timedelta(minutes=CHART_MINUTES - 1)
    minute = func.date_trunc("minute", Job.finished_at)
    jobs = _pairs(
        session.execute(select(minute, func.count()).where(Job.finished_at >= since).group_by(minute))
    )
    minute = func.date_trunc("minute", Shard.finished_at)
    boards = _pairs(
        session.execute(
            select(minute, func.sum(Shard.row_count))
            .where(Shard.finished_at >= since, Shard.state == ShardState.SUCCEEDED)
            .group_by(minute)
        )
    )
    starts = [since + timedelta(minutes=i) for i in range(CHART_MINUTES)]
    return [Minute(start, jobs.get(start, 0), int(boards.get(start) or 0)) for start in starts]


# -- jobs table (the query: store.listing) -------------------------------------------------------
def key_names(session: Session, ids: set[int]) -> dict[int, str]:
    """Each key's name and visible prefix, e.g. `ci (zk_Ab12Cd3)`."""
    if not ids:
        return {}
    rows = session.execute(select(ApiKey.id, ApiKey.name, ApiKey.prefix).where(ApiKey.id.in_(ids)))
    return {key_id: f"{name} ({prefix})" for key_id, name, prefix in rows}


# -- the keys page --------------------------------------------------------------------------------
def unfinished_by_key(session: Session) -> dict[int, dict[str, int]]:
    """Each key's unfinished jobs by state (queued, running, cancelling), from ix_jobs_owner_unfinished."""
    unfinished = (JobState.QUEUED, JobState.RUNNING, JobState.CANCELLING)
    by_key = select(Job.owner_id, Job.state, func.count()).where(Job.state.in_(unfinished))
    rows = session.execute(by_key.group_by(Job.owner_id, Job.state))
    counts: dict[int, dict[str, int]] = {}
    for owner_id, state, count in rows:
        counts.setdefault(owner_id, {})[str(state)] = count
    return counts


# -- a job's page ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ShardCell:
    id: int
    key: str
    state: ShardState
    attempts: int
    lease_owner: str | None
    row_count: int | None
    #: running with an expired lease, or queued without a message for a while
    stuck: bool


@dataclass(frozen=True)
class JobDetail:
    job: Job
    history: list[JobEvent]
    shard_counts: dict[str, int]
    shards: list[ShardCell]
    active_shards: list[ShardCell]
    #: key id → name, for the owner and every actor in the history
    keys: dict[int, str]


def job_detail(session: Session, job_id: uuid.UUID, *, stuck_after: float) -> JobDetail | None:
    job = session.get(Job, job_id)
    if job is None:
        return None
    history = events.history(session, job_id)
    counts = _pairs(
        session.execute(select(Shard.state, func.count()).where(Shard.job_id == job_id).group_by(Shard.state))
    )
    cells = _shard_cells(session, job_id, stuck_after) if counts else []
    actors = {e.actor_key_id for e in history if e.actor_key_id is not None}
    return JobDetail(
        job=job,
        history=history,
        shard_counts=counts,
        shards=cells,
        active_shards=[c for c in cells if c.state in (ShardState.QUEUED, ShardState.RUNNING)][
            :MAX_ACTIVE_SHARDS
        ],
        keys=key_names(session, {job.owner_id, *actors}),
    )


def _shard_cells(session: Session, job_id: uuid.UUID, stuck_after: float) -> list[ShardCell]:
    lost = func.now() - timedelta(seconds=stuck_after)
    stuck = or_(
        and_(Shard.state == ShardState.RUNNING, Shard.lease_expires_at < func.now()),
        # a held shard (enqueued_at NULL) is waiting its client's turn (store.dispatch), not stuck
        and_(Shard.state == ShardState.QUEUED, Shard.enqueued_at < lost),
    )
    rows = session.execute(
        select(Shard.id, Shard.key, Shard.state, Shard.attempts, Shard.lease_owner, Shard.row_count, stuck)
        .where(Shard.job_id == job_id)
        .order_by(Shard.id)
        .limit(MAX_SHARD_CELLS)
    )
    return [ShardCell(*row) for row in rows]


# -- actions --------------------------------------------------------------------------------------
def retry_job(session: Session, job_id: uuid.UUID, actor_key_id: int) -> Job:
    """A failed job starts over: queued, attempts and counters reset, its shards dropped (a sharded job is
    planned again). Its stored rows (up to a million boards) are not deleted here, under the caller's
    statement timeout: the worker that plans the job again deletes them first, in chunks
    (store.rows.delete_rows). The caller publishes the wake-up message after commit."""
    job = session.scalar(select(Job).where(Job.id == job_id).with_for_update())
    if job is None or job.state != JobState.FAILED:
        raise ActionRefused("only a failed job can be retried")
    if session.scalar(
        select(Shard.id).where(Shard.job_id == job_id, Shard.state == ShardState.RUNNING).limit(1)
    ):
        raise ActionRefused("some of its shards are still stopping; try again in a few seconds")
    error = JobError.from_json(job.error).event_detail() if job.error else None
    detail = {"previous_attempts": job.attempts, "error": error}
    session.execute(delete(Shard).where(Shard.job_id == job_id))
    session.execute(delete(ResultItem).where(ResultItem.job_id == job_id))
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(
            state=JobState.QUEUED,
            attempts=0,
            retries=Job.retries + 1,
            cancel_requested=False,
            progress=None,
            result=None,
            error=None,
            lease_owner=None,
            lease_expires_at=None,
            heartbeat_at=None,
            started_at=None,
            finished_at=None,
            enqueued_at=func.now(),
            shards_total=0,
            shards_done=0,
            rows_done=0,
            finalize_attempts=0,
            finalize_enqueued_at=None,
        )
    )
    events.record(session, job_id, EventName.RETRIED, actor_key_id=actor_key_id, detail=detail)
    session.refresh(job)
    return job


def requeue_shard(session: Session, job_id: uuid.UUID, shard_id: int, actor_key_id: int) -> Shard:
    """A queued or running shard of a running job goes back to the queue with a fresh message (the
    caller publishes it after commit). A worker still holding it loses its lease and stops at its next
    heartbeat without storing anything, so the shard's boards are written once."""
    shard: Shard | None = session.scalar(
        update(Shard)
        .where(
            Shard.id == shard_id,
            Shard.job_id == job_id,
            Shard.state.in_((ShardState.QUEUED, ShardState.RUNNING)),
            select(Job.id).where(Job.id == job_id, Job.state == JobState.RUNNING).exists(),
        )
        .values(state=ShardState.QUEUED, lease_owner=None, lease_expires_at=None, enqueued_at=func.now())
        .returning(Shard)
    )
    if shard is None:
        raise ActionRefused("only a queued or running shard of a running job can be requeued")
    events.record(
        session,
        job_id,
        EventName.SHARD_REQUEUED,
        attempt=shard.attempts,
        actor_key_id=actor_key_id,
        detail={"shard": shard.key, "reason": "operator"},
    )
    return shard

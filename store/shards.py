"""Shard state transitions for sharded jobs. Like store.jobs, every transition is a guarded statement.

Exactly-once in effect over at-least-once delivery: a shard's rows (COPY), its `succeeded` mark and the
job's counters are committed in one transaction, and only by the lease holder (a shard's `succeeded`
mark is a compare-and-set on its lease and its running state). The last shard to finish is found by the
job's counters in PostgreSQL.
"""

from __future__ import annotations

import enum
import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import (
    BigInteger,
    BindParameter,
    ColumnElement,
    Exists,
    Float,
    Integer,
    Interval,
    Select,
    Text,
    Update,
    and_,
    bindparam,
    case,
    false,
    func,
    insert,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session, aliased

from core.errors import ErrorType, JobError
from core.events import EventName
from core.progress import shard_progress
from core.states import JobState, ShardState
from store import events
from store.db import rowcount
from store.models import Job, Shard
from store.rows import RowData, copy_rows


def _lease_until(seconds: float) -> Any:
    return func.now() + timedelta(seconds=seconds)


def unsent_or_lost(enqueued_at: Any, requeue_after: float | None) -> Any:
    """Rows whose wake-up message was never sent, or (given `requeue_after`) was sent that long ago."""
    if requeue_after is None:
        return enqueued_at.is_(None)
    return or_(enqueued_at.is_(None), sent_long_ago(enqueued_at, requeue_after))


def sent_long_ago(enqueued_at: Any, requeue_after: float | None) -> Any:
    """Rows (given `requeue_after`) whose message was sent that long ago and that no worker has claimed
    since: lost, or still waiting behind other work (a second wake-up is then a no-op: every claim is a
    compare-and-set). Rows never sent are store.dispatch's."""
    if requeue_after is None:
        return false()
    return enqueued_at < func.now() - timedelta(seconds=requeue_after)


def create_shards(session: Session, job_id: uuid.UUID, worker: str, keys: list[str]) -> list[int]:
    """Store the plan and hand the job over to its shards (the planner's lease ends here)."""
    planned = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.lease_owner == worker, Job.state == JobState.RUNNING)
        .values(
            shards_total=len(keys),
            lease_owner=None,
            lease_expires_at=None,
            progress=None,
            # no shard at all: the planner publishes the finalize message itself
            finalize_enqueued_at=None if keys else func.now(),
        )
    )
    if rowcount(planned) != 1:
        if _cancel_unplanned(session, job_id, worker):
            return []
        raise LeaseLost(f"job {job_id}: lease lost while planning")
    ids = _insert_shards(session, job_id, keys)
    events.record(session, job_id, EventName.PLANNED, detail={"shards": len(keys), "worker": worker})
    return ids


def _cancel_unplanned(session: Session, job_id: uuid.UUID, worker: str) -> bool:
    """A cancel landed while the plan was being made: end the job cancelled, with no shard stored."""
    cancelled = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.lease_owner == worker, Job.state == JobState.CANCELLING)
        .values(state=JobState.CANCELLED, finished_at=func.now(), lease_owner=None, lease_expires_at=None)
    )
    if rowcount(cancelled) != 1:
        return False
    events.record(session, job_id, EventName.CANCELLED, detail={"worker": worker, "while": "planning"})
    return True


class LeaseLost(Exception):
    pass


def _insert_shards(session: Session, job_id: uuid.UUID, keys: list[str]) -> list[int]:
    if not keys:
        return []
    rows = [{"job_id": job_id, "key": key} for key in keys]  # held: see store.dispatch
    return list(session.scalars(insert(Shard).returning(Shard.id, sort_by_parameter_order=True), rows))


@dataclass(frozen=True)
class ClaimedShard:
    id: int
    job_id: uuid.UUID
    key: str
    kind: str
    params: dict[str, Any]
    #: what is left of the job's solve time: its time_limit counts every shard's time, not each one's
    time_limit: float
    attempts: int
    owner_id: int
    #: the job's trace (core.tracing), if it has one
    trace_parent: str | None = None


def claim_shard(
    session: Session, shard_id: int, worker: str, lease_seconds: float, max_attempts: int | None = None
) -> ClaimedShard | None:
    """Take a queued shard (or one whose lease expired, while it has attempts left) of a job that is
    still running."""
    values = {"shard_id": shard_id, "max_attempts": max_attempts}
    return _claim(session, _claim_statement("by_id"), worker, lease_seconds, values)


def claim_next_held(
    session: Session, job_id: uuid.UUID, worker: str, lease_seconds: float
) -> ClaimedShard | None:
    """Take the job's next held shard (queued, no message sent: see store.dispatch) straight from the
    table, for a worker that has just finished one of its shards: the client's count of work in flight
    stays the same, and no message, release or broker round trip stands between the two shards. A row
    another transaction holds (a release marking it sent, another worker's claim) is skipped; nothing is
    taken while another client's shard waits in the broker (its turn comes first)."""
    return _claim(session, _claim_statement("next_held"), worker, lease_seconds, {"of_job": job_id})


def _claim(
    session: Session,
    statement: Select[*tuple[Any, ...]],
    worker: str,
    lease_seconds: float,
    values: dict[str, Any],
) -> ClaimedShard | None:
    values |= {"worker": worker, "lease": timedelta(seconds=lease_seconds)}
    row = session.connection().execute(statement, values).one_or_none()
    if row is None:
        return None
    return ClaimedShard(
        row.id,
        row.job_id,
        row.key,
        row.kind,
        row.params,
        row.time_limit - row.used,
        row.attempts,
        row.owner_id,
        row.trace_parent,
    )


@functools.cache
def _claim_statement(which: str) -> Select[*tuple[Any, ...]]:
    """The claim of a shard (`by_id`: `:shard_id`, while it has attempts left under `:max_attempts`,
    NULL: no limit; `next_held`: the next held shard of `:of_job`) for `:worker` with a lease of
    `:lease`, returning it with its job and the job's time used. Built once: composing it cost several
    times what PostgreSQL takes to run it."""
    if which == "by_id":
        max_attempts = bindparam("max_attempts", type_=Integer)
        attempts_left = or_(max_attempts.is_(None), Shard.attempts < max_attempts)
        which_shard = and_(
            Shard.id == bindparam("shard_id", type_=BigInteger),
            or_(
                Shard.state == ShardState.QUEUED,
                and_(Shard.state == ShardState.RUNNING, Shard.lease_expires_at < func.now(), attempts_left),
            ),
        )
    else:
        of_job = bindparam("of_job", type_=Job.id.type)
        held = (
            select(Shard.id)
            .where(
                Shard.job_id == of_job,
                Shard.state == ShardState.QUEUED,
                Shard.enqueued_at.is_(None),
                ~_another_clients_shard_waits(of_job),
                ~_interactive_work_waits(),
            )
            .order_by(Shard.id)
            .limit(1)
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
        which_shard = Shard.id == held
    job_alive = (
        select(Job.id).where(
            Job.id == Shard.job_id, Job.state == JobState.RUNNING, Job.cancel_requested.is_(False)
        )
    ).exists()
    claimed = (
        update(Shard)
        .where(which_shard, job_alive)
        .values(
            state=ShardState.RUNNING,
            lease_owner=bindparam("worker", type_=Text),
            lease_expires_at=func.now() + bindparam("lease", type_=Interval),
            heartbeat_at=func.now(),
            attempts=Shard.attempts + 1,
            started_at=func.now(),
            # a held shard taken straight from the table is sent as far as a release can tell
            enqueued_at=func.coalesce(Shard.enqueued_at, func.now()),
        )
        .returning(Shard.id, Shard.job_id, Shard.key, Shard.attempts)
        .cte("claimed")
    )
    # the job's time used so far, as the statement's snapshot sees it (the claimed shard was not done)
    done = aliased(Shard)
    used = (
        select(func.coalesce(func.sum(done.solve_seconds), 0.0))
        .where(done.job_id == claimed.c.job_id, done.state.in_((ShardState.SUCCEEDED, ShardState.SPLIT)))
        .scalar_subquery()
    )
    # one round trip: the claim, its job and the job's time used
    job = (Job.kind, Job.params, Job.time_limit, Job.owner_id, Job.trace_parent)
    return select(claimed, *job, used.label("used")).join(Job, Job.id == claimed.c.job_id)


def _another_clients_shard_waits(of_job: BindParameter[uuid.UUID]) -> Exists:
    """Whether a shard of another client than `of_job`'s, or of a job of this client's with a higher
    priority, was sent and waits in the broker: a chain then ends, and that shard's turn comes before
    this job's next one (fair share between bulk jobs, and priority within a client's). Uncorrelated, so
    PostgreSQL reads it once per statement, on ix_shards_sent's few rows."""
    waiting, its_job, chained_job = aliased(Shard), aliased(Job), aliased(Job)
    chaining = select(chained_job.owner_id, chained_job.priority).where(chained_job.id == of_job).subquery()
    return (
        select(waiting.id)
        .join(its_job, its_job.id == waiting.job_id)
        .join(chaining, true())
        .where(
            waiting.state == ShardState.QUEUED,
            waiting.enqueued_at.is_not(None),
            or_(its_job.owner_id != chaining.c.owner_id, its_job.priority > chaining.c.priority),
        )
        .exists()
    )


def _interactive_work_waits() -> ColumnElement[bool]:
    """Whether work that goes before bulk shards was sent and is not taken yet: a job (its own run, or a
    plan), a shard run again after its worker died, or a job's first finalize. A chain then ends, so the
    process takes it next (the broker's priorities put it ahead). Uncorrelated, read once per statement
    on the partial indexes of sent rows."""
    job_sent = select(Job.id).where(Job.state == JobState.QUEUED, Job.enqueued_at.is_not(None))
    retried = aliased(Shard)
    shard_retried = select(retried.id).where(
        retried.state == ShardState.QUEUED, retried.enqueued_at.is_not(None), retried.attempts > 0
    )
    finalizing = aliased(Job)
    finalize_sent = select(finalizing.id).where(
        finalizing.state == JobState.RUNNING,
        finalizing.lease_owner.is_(None),
        finalizing.shards_done == finalizing.shards_total,
        finalizing.finalize_enqueued_at.is_not(None),
        finalizing.finalize_attempts == 0,
    )
    return or_(job_sent.exists(), shard_retried.exists(), finalize_sent.exists())


def heartbeat_shard(session: Session, shard_id: int, worker: str, lease_seconds: float) -> bool | None:
    """Extend the lease. True when the shard should stop (its job is cancelled or finished); None when the
    lease was lost."""
    job_stopping = (
        select(or_(Job.cancel_requested, Job.state != JobState.RUNNING))
        .where(Job.id == Shard.job_id)
        .scalar_subquery()
    )
    stopping: bool | None = session.scalar(
        update(Shard)
        .where(Shard.id == shard_id, Shard.lease_owner == worker, Shard.state == ShardState.RUNNING)
        .values(heartbeat_at=func.now(), lease_expires_at=_lease_until(lease_seconds))
        .returning(job_stopping)
    )
    return stopping


def _end_shard(session: Session, shard_id: int, worker: str, **values: Any) -> Shard | None:
    return session.scalar(
        update(Shard)
        .where(Shard.id == shard_id, Shard.lease_owner == worker, Shard.state == ShardState.RUNNING)
        .values(finished_at=func.now(), lease_owner=None, lease_expires_at=None, **values)
        .returning(Shard)
    )


@dataclass(frozen=True)
class Completion:
    stored: bool
    last: bool  # every shard of the job is done: finalize
    #: the job's next held shard, claimed in the same transaction (asked for with `chain_lease`)
    next: ClaimedShard | None = None


def complete_shard(
    session: Session,
    shard_id: int,
    worker: str,
    rows: Sequence[RowData],
    summary: dict[str, Any],
    solve_seconds: float,
    rest: Sequence[str] = (),
    chain_lease: float | None = None,
) -> Completion:
    """Store a shard's rows and summary; `rest` (the part of its work it handed on) becomes new shards,
    held for store.dispatch. With `chain_lease`, the job's next held shard is claimed for the same
    worker with that lease (claim_next_held). The job's row, which every worker of the job updates, is
    locked after the rows are written, so that it is held only for the counting, the claim of the next
    shard and the commit. The claim comes after the job's row, as in a cancel or a job's failure (the
    job's row, then its queued shards): taken the other way round, the two transactions waited on each
    other."""
    job_id = _finish(session, shard_id, worker, ShardState.SUCCEEDED, len(rows), summary, solve_seconds)
    if job_id is None:
        return Completion(stored=False, last=False)
    copy_rows(session, job_id, rows)
    _insert_shards(session, job_id, list(rest))
    counts = _count_done(session, job_id, len(rest), len(rows))
    if counts.cancelling:
        _end_cancelled(session, job_id)
        return Completion(stored=True, last=False)
    last = counts.shards_done == counts.shards_total
    if last or chain_lease is None:
        return Completion(stored=True, last=last)
    following = claim_next_held(session, job_id, worker, chain_lease)
    return Completion(stored=True, last=last, next=following)


def commit_without_flush_wait(session: Session) -> None:
    """This transaction's commit returns before its WAL reaches the disk (PostgreSQL's
    `synchronous_commit = off`, for it alone): a shard's store is committed by every worker several
    times a second, and waiting for the flush held the job's row locked for as long. Only a crash of
    PostgreSQL itself can lose such a commit (within `wal_writer_delay` times three), and it loses it
    whole, in order: the shard is then still running under a lease that expires, and runs again, its
    rows never stored twice. What acts on it outside the database is undone the same way: the next
    shard it claimed (the chain) loses its lease with it, so its run is stopped and its store refused;
    a finalize message checks the counts it reads; a release sends only what its own transaction saw."""
    session.connection().exec_driver_sql("SET LOCAL synchronous_commit = off")


#: what a sharded job's `progress` event says, as the job row has it after a shard ended
PROGRESS_COLUMNS = (
    Job.shards_done,
    Job.shards_total,
    Job.rows_done,
    func.extract("epoch", func.now() - Job.started_at).label("elapsed"),
)


def _finish(
    session: Session,
    shard_id: int,
    worker: str,
    state: ShardState,
    row_count: int,
    summary: dict[str, Any] | None,
    solve_seconds: float | None,
) -> uuid.UUID | None:
    """End the worker's running shard as `state` (succeeded, split); its job, or None when the lease was
    lost."""
    values = {
        "of_shard": shard_id,
        "leased_to": worker,
        "new_state": state,
        "rows_made": row_count,
        "shard_summary": summary,
        "seconds": solve_seconds,
    }
    finished_job: uuid.UUID | None = session.connection().scalar(_finish_statement(), values)
    return finished_job


def _count_done(session: Session, job_id: uuid.UUID, added_shards: int, added_rows: int) -> Any:
    """Count a shard done on its job (and the shards it added, the rows it stored), record the progress
    event when it is due (PROGRESS_EVERY), and return the job's counts."""
    values = {
        "of_job": job_id,
        "added_shards": added_shards,
        "added_rows": added_rows,
        "every": PROGRESS_EVERY,
    }
    counts = session.connection().execute(_count_statement(), values).one()
    if counts.progress_due:
        _record_progress(session, job_id, counts)
    return counts


# A shard's claim and store run their statements on the session's connection (SQLAlchemy Core), not
# through the ORM's handling of a mapped class's UPDATE: the session holds no object they change, and the
# ORM's path costs more than the statement, several times a shard (docs/benchmarks.md, "Less serial time,
# no thread per shard").


@functools.cache
def _finish_statement() -> Update:
    """Built once, like every statement of a shard's store: composing them cost more than running them."""
    return (
        update(Shard)
        .where(
            Shard.id == bindparam("of_shard", type_=BigInteger),
            Shard.lease_owner == bindparam("leased_to", type_=Text),
            Shard.state == ShardState.RUNNING,
        )
        .values(
            state=bindparam("new_state", type_=Shard.state.type),
            finished_at=func.now(),
            lease_owner=None,
            lease_expires_at=None,
            row_count=bindparam("rows_made", type_=Integer),
            summary=bindparam("shard_summary", type_=JSONB(none_as_null=True)),
            solve_seconds=bindparam("seconds", type_=Float),
        )
        .returning(Shard.job_id)
    )


#: a sharded job's `progress` event is recorded at most this often, and by its last shard: an event is a
#: row with triggers and a NOTIFY, whose commit takes a lock every notifying transaction takes in turn
PROGRESS_EVERY = timedelta(seconds=0.5)


@functools.cache
def _count_statement() -> Update:
    added_shards = bindparam("added_shards", type_=Integer)
    last = Job.shards_done + 1 == Job.shards_total + added_shards
    progress_due = or_(
        last,
        Job.progress_event_at.is_(None),
        Job.progress_event_at <= func.now() - bindparam("every", type_=Interval),
    )
    return (
        update(Job)
        .where(Job.id == bindparam("of_job", type_=Job.id.type))
        .values(
            shards_done=Job.shards_done + 1,
            shards_total=Job.shards_total + added_shards,
            rows_done=Job.rows_done + bindparam("added_rows", type_=BigInteger),
            # the last shard's worker publishes the finalize message once this commits
            finalize_enqueued_at=case((last, func.now()), else_=None),
            progress_event_at=case((progress_due, func.now()), else_=Job.progress_event_at),
        )
        # now() is the transaction's start: equal only when this statement set it
        .returning(
            *PROGRESS_COLUMNS,
            (Job.progress_event_at == func.now()).label("progress_due"),
            (Job.state == JobState.CANCELLING).label("cancelling"),
        )
    )


def _record_progress(session: Session, job_id: uuid.UUID, counts: Any) -> None:
    elapsed = float(counts.elapsed or 0)  # PostgreSQL's numeric
    progress = shard_progress(counts.shards_done, counts.shards_total, counts.rows_done, elapsed)
    events.record(session, job_id, EventName.PROGRESS, detail=progress.to_json())


def split_shard(
    session: Session, shard_id: int, worker: str, keys: list[str], solve_seconds: float | None = None
) -> list[int]:
    """The shard was too large: replace it by finer shards. Returns the new shards' ids."""
    job_id = _finish(session, shard_id, worker, ShardState.SPLIT, 0, None, solve_seconds)
    if job_id is None:
        return []
    ids = _insert_shards(session, job_id, keys)
    if _count_done(session, job_id, len(keys), 0).cancelling:
        _end_cancelled(session, job_id)
        return []
    return ids


def _end_cancelled(session: Session, job_id: uuid.UUID) -> None:
    """A shard of a job being cancelled ended as it would have anyway (it finished, or split): what it
    handed on never starts, and the job is cancelled now if no other shard still runs (else that one's
    end does it), not at the next sweep."""
    cancel_queued_shards(session, [job_id])
    settle_cancellation(session, job_id)


def fail_shard(session: Session, shard_id: int, worker: str, error: JobError) -> None:
    """One shard cannot be done, so neither can the job: fail both and stop the rest."""
    shard = _end_shard(session, shard_id, worker, state=ShardState.FAILED, error=error.to_json())
    if shard is not None:
        fail_job(session, shard.job_id, error.within(f"shard {shard.key}"))


def fail_job(session: Session, job_id: uuid.UUID, error: JobError) -> None:
    failed = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.state.in_((JobState.RUNNING, JobState.CANCELLING)))
        .values(
            state=JobState.FAILED,
            error=error.to_json(),
            finished_at=func.now(),
            lease_owner=None,
            lease_expires_at=None,
        )
    )
    if rowcount(failed) == 1:
        events.record(session, job_id, EventName.FAILED, detail=error.event_detail())
    cancel_queued_shards(session, [job_id])


def stop_shard(session: Session, shard_id: int, worker: str) -> None:
    """The shard stopped because its job is being cancelled (or already ended)."""
    shard = _end_shard(session, shard_id, worker, state=ShardState.CANCELLED)
    if shard is not None:
        settle_cancellation(session, shard.job_id)


def cancel_queued_shards(session: Session, job_ids: Sequence[uuid.UUID]) -> None:
    """The queued shards of these jobs never start."""
    session.execute(
        update(Shard)
        .where(Shard.job_id.in_(job_ids), Shard.state == ShardState.QUEUED)
        .values(state=ShardState.CANCELLED, finished_at=func.now())
    )


def settle_cancellation(session: Session, job_id: uuid.UUID) -> None:
    """A cancelling sharded job becomes cancelled once none of its shards is still running."""
    still_running = select(Shard.id).where(Shard.job_id == job_id, Shard.state == ShardState.RUNNING).exists()
    settled = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.state == JobState.CANCELLING, Job.lease_owner.is_(None), ~still_running)
        .values(state=JobState.CANCELLED, finished_at=func.now())
    )
    if rowcount(settled) == 1:
        events.record(session, job_id, EventName.CANCELLED)


def awaiting_finalize() -> Any:
    """Sharded jobs past planning (running without a lease) whose every shard is done."""
    return and_(Job.state == JobState.RUNNING, Job.lease_owner.is_(None), Job.shards_done == Job.shards_total)


class FinalizeStart(enum.Enum):
    RUN = "run"
    SKIP = "skip"  # finished already, not ready, or another finalize holds the job right now
    GIVE_UP = "give_up"  # it started max_attempts times without finishing: the job was failed


def start_finalize(session: Session, job_id: uuid.UUID, max_attempts: int) -> FinalizeStart:
    """Count a finalize attempt, committed before the work starts so a finalize that kills its process
    is counted too; past `max_attempts` the job fails instead of being finalized for ever."""
    attempts = session.scalar(
        update(Job)
        .where(Job.id == job_id, awaiting_finalize())
        .values(finalize_attempts=Job.finalize_attempts + 1)
        .returning(Job.finalize_attempts)
    )
    if attempts is None:
        return FinalizeStart.SKIP
    if attempts > max_attempts:
        gave_up = f"combining the shards' results did not finish in {max_attempts} attempts"
        fail_job(session, job_id, JobError(ErrorType.FINALIZE_FAILED, gave_up))
        return FinalizeStart.GIVE_UP
    return FinalizeStart.RUN


def lock_for_finalize(session: Session, job_id: uuid.UUID) -> Job | None:
    """The job, row-locked for this transaction, if it still awaits its finalize and no other finalize
    holds it (a duplicate message then does nothing)."""
    return session.scalar(
        select(Job).where(Job.id == job_id, awaiting_finalize()).with_for_update(skip_locked=True)
    )


def lock_succeeded(session: Session, job_id: uuid.UUID) -> bool:
    """Whether the job has succeeded; its row is then key-share locked until the transaction ends, so a
    purge cannot delete it meanwhile (its updates still go)."""
    locked = select(Job.id).where(Job.id == job_id, Job.state == JobState.SUCCEEDED)
    return session.scalar(locked.with_for_update(read=True, key_share=True)) is not None


def summaries(session: Session, job_id: uuid.UUID) -> list[dict[str, Any]]:
    return list(
        session.scalars(
            select(Shard.summary).where(Shard.job_id == job_id, Shard.state == ShardState.SUCCEEDED)
        )
    )


def finish_sharded_job(session: Session, job_id: uuid.UUID, result: dict[str, Any] | None) -> bool:
    """Store the combined result once every shard is done (idempotent: a second finalize does nothing)."""
    done = session.execute(
        update(Job)
        .where(
            Job.id == job_id,
            Job.state == JobState.RUNNING,
            Job.lease_owner.is_(None),
            Job.shards_done == Job.shards_total,
        )
        .values(
            state=JobState.SUCCEEDED, result=result, finished_at=func.now(), rows_job_id=Job.id, progress=None
        )
    )
    if rowcount(done) != 1:
        return False
    events.record(session, job_id, EventName.SUCCEEDED)
    return True


@dataclass(frozen=True)
class ShardSweep:
    to_enqueue: list[int]
    to_finalize: list[uuid.UUID]


def sweep_shards(
    session: Session,
    *,
    max_attempts: int,
    requeue_after: float | None,
    stale_after: float,
    batch: int = 500,
) -> ShardSweep:
    """Requeue shards whose worker died (fail the job after `max_attempts`), resend lost messages (see
    store.jobs.sweep for `requeue_after`), find finished jobs whose finalize message was lost (quiet for
    `stale_after` seconds), and settle abandoned cancellations."""
    expired = list(
        session.scalars(
            select(Shard)
            .where(Shard.state == ShardState.RUNNING, Shard.lease_expires_at < func.now())
            .limit(batch)
            .with_for_update(skip_locked=True)
        )
    )
    for shard in expired:
        lost = {"shard": shard.key, "reason": "lease expired", "worker": shard.lease_owner}
        shard.lease_owner, shard.lease_expires_at = None, None
        if shard.attempts >= max_attempts:
            shard.state, shard.finished_at = ShardState.FAILED, func.now()
            error = JobError(ErrorType.WORKER_LOST, f"worker lost {shard.attempts} times")
            shard.error = error.to_json()
            fail_job(session, shard.job_id, error.within(f"shard {shard.key}"))
        else:
            shard.state, shard.enqueued_at = ShardState.QUEUED, None
            requeued = EventName.SHARD_REQUEUED
            events.record(session, shard.job_id, requeued, attempt=shard.attempts, detail=lost)
    session.flush()
    stale = list(
        session.scalars(
            select(Shard.id)
            .join(Job, Job.id == Shard.job_id)
            .where(
                Shard.state == ShardState.QUEUED,
                Job.state == JobState.RUNNING,
                sent_long_ago(Shard.enqueued_at, requeue_after),
            )
            .order_by(Shard.id)
            .limit(batch)
            .with_for_update(of=Shard, skip_locked=True)
        )
    )
    if stale:
        session.execute(update(Shard).where(Shard.id.in_(stale)).values(enqueued_at=func.now()))
    unfinalized = list(
        session.scalars(
            select(Job.id)
            .where(
                awaiting_finalize(),
                unsent_or_lost(Job.finalize_enqueued_at, stale_after),
            )
            .limit(batch)
            .with_for_update(skip_locked=True)
        )
    )
    if unfinalized:
        session.execute(update(Job).where(Job.id.in_(unfinalized)).values(finalize_enqueued_at=func.now()))
    for job_id in session.scalars(
        select(Job.id).where(Job.state == JobState.CANCELLING, Job.lease_owner.is_(None))
    ):
        settle_cancellation(session, job_id)
    return ShardSweep(to_enqueue=stale, to_finalize=unfinalized)

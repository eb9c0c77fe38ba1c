"""Running claimed work: a whole job, a job's planning, one shard, or a sharded job's finalize.

The puzzle runs in this thread; a watcher beside it (a repeating alarm on the process's heartbeat clock,
core.alarms) heartbeats the lease, flushes progress and, when the job is cancelled or the lease is lost,
interrupts Z3 through the run (Celery's own time limits cannot stop a running `check()`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_before_delay, wait_exponential

from core import tracing
from core.alarms import Alarm, AlarmClock
from core.config import Settings
from core.errors import ErrorType, JobError, StopReason
from core.outages import Outage
from core.states import JobState
from kinds import Kind, get_kind
from puzzles.runtime import Cancelled, Run, TimeLimitExceeded
from services.messages import Messages
from services.outages import server_away
from store import jobs, results, rows, shards
from store.db import Database

log = logging.getLogger("zolve.worker")
T = TypeVar("T")

#: heartbeat(session, progress) -> stop requested? (None: the lease is lost)
Heartbeat = Callable[[Session, "dict[str, Any] | None"], "bool | None"]


#: every watched run's heartbeats, on one thread per process (core.alarms); apart from the deadlines' clock,
#: so that a beat waiting on the database never delays a deadline
_HEARTBEATS = AlarmClock("zolve-heartbeats")


class Watcher:
    """Beats a run's heartbeat every `watch_interval` while it runs, and stops the run when its job or
    shard is cancelled or its lease is lost."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        beat: Heartbeat,
        kind: Kind,
        time_limit: float,
        slice_seconds: float | None = None,
        on_rows: Callable[[list[rows.RowData]], None] | None = None,
    ):
        self.db, self.settings, self.beat = db, settings, beat
        self.latest_progress: dict[str, Any] | None = None
        self.solve_run = Run(
            time_limit=time_limit,
            on_progress=self.report,
            on_rows=on_rows,
            resources=kind.resources_for(db),
            slice_seconds=slice_seconds,
        )
        self._stopped = threading.Event()
        self._alarm: Alarm | None = None
        self.outage = Outage(log, "heartbeat", server_away)

    def report(self, progress: dict[str, Any]) -> None:
        self.latest_progress = progress

    def start(self) -> None:
        self._alarm = _HEARTBEATS.every(self.settings.watch_interval, self._beat)

    def _beat(self) -> None:
        if self._stopped.is_set():
            return
        try:
            with self.db.session() as session:
                stop = self.beat(session, self.latest_progress)
        except Exception as error:  # the database may be restarting: the lease has slack, keep trying
            self.outage.failed(error)
            return
        self.outage.succeeded()
        if self._stopped.is_set():  # the work ended while we were beating: nothing to interrupt
            return
        if stop is None:
            log.warning("lease lost, stopping")
            self.solve_run.stop(StopReason.LEASE_LOST)
        elif stop:
            self.solve_run.stop(StopReason.CANCELLED)

    def stop(self) -> None:
        """No beat starts after this; one under way finishes without touching the run."""
        self._stopped.set()
        if self._alarm is not None:
            self._alarm.cancel()


class Ending(StrEnum):
    """How a watched piece of work ended (LOST: its lease was lost, so it stores nothing)."""

    OK = "ok"
    CANCELLED = "cancelled"
    FAILED = "failed"
    LOST = "lost"


#: the state a job ends in, by how its watched run ended
OUTCOME_STATES = {
    Ending.OK: JobState.SUCCEEDED,
    Ending.CANCELLED: JobState.CANCELLED,
    Ending.FAILED: JobState.FAILED,
}


@dataclass
class Watched:
    """How a watched piece of work ended, and what it left."""

    status: Ending
    value: Any = None
    error: JobError | None = None
    progress: dict[str, Any] | None = None
    seconds: float = 0.0


def run_watched(
    db: Database,
    settings: Settings,
    beat: Heartbeat,
    kind: Kind,
    time_limit: float,
    work: Callable[[Run], T],
    slice_seconds: float | None = None,
    on_rows: Callable[[list[rows.RowData]], None] | None = None,
) -> Watched:
    """Run `work` for a job or shard of `kind`, with the resources the kind's runs are offered (and, for
    a shard, the slice after which it hands the rest of its work on; for a kind with rows solved whole,
    where the rows it hands over go)."""
    watcher = Watcher(db, settings, beat, kind, time_limit, slice_seconds, on_rows)
    run = watcher.solve_run
    started = time.monotonic()
    watcher.start()
    try:
        with run:
            outcome = Watched(Ending.OK, value=work(run))
    except Cancelled as stop:
        outcome = Watched(Ending.CANCELLED, error=JobError(ErrorType.CANCELLED, str(stop)))
    except TimeLimitExceeded as exc:
        outcome = Watched(Ending.FAILED, error=JobError(ErrorType.TIME_LIMIT, str(exc)))
    except Exception as exc:  # a puzzle bug or a solver failure: record it, never lose it
        log.exception("solve failed")
        outcome = Watched(Ending.FAILED, error=JobError.from_exception(exc))
    finally:
        watcher.stop()
    if run.stop_reason == StopReason.LEASE_LOST:
        outcome = Watched(Ending.LOST)
    outcome.progress, outcome.seconds = watcher.latest_progress, time.monotonic() - started
    return outcome


#: a wake-up that finds its row taken, finished or cancelled: a duplicate message (the sweeper re-sends a
#: row it cannot tell from a lost one), or one that outlived its work; bench/chaos.py counts these lines
NOTHING_TO_CLAIM = "%s %s: nothing to claim (taken, finished or cancelled already)"


def execute(db: Database, settings: Settings, job_id: uuid.UUID, worker: str) -> Messages:
    """Claim and run a job; a sharded kind is planned here and continues in its shards. What follows
    includes the job's client, whose next held job (or planned shards) may now go."""
    with db.session() as session:
        job = jobs.claim(session, job_id, worker, settings.lease_seconds, settings.max_attempts)
        if job is None:
            log.info(NOTHING_TO_CLAIM, "job", job_id)
            return Messages()
        kind, params, time_limit, owner = job.kind, job.params, job.time_limit, job.owner_id
    attributes = {"zolve.job_id": str(job_id), "zolve.kind": kind, "zolve.attempt": job.attempts}
    if job.attempts == 1 and job.started_at is not None:  # its wait, from its submit to its first start
        tracing.past_span("zolve.queued", job.trace_parent, job.created_at, job.started_at, attributes)

    try:
        with tracing.job_span("zolve.run", job.trace_parent, {**attributes, "zolve.worker": worker}):
            followups = _run_claimed_job(db, settings, job_id, worker, kind, params, time_limit)
    except DBAPIError:
        raise  # the database is away: Celery retries, the lease keeps the job ours meanwhile
    except Exception as exc:  # a bug after the claim: fail now, with the error, rather than time out
        log.exception("job %s failed outside the solver", job_id)
        with db.session() as session:
            jobs.finish(session, job_id, worker, state=JobState.FAILED, error=JobError.from_exception(exc))
        followups = Messages()
    followups.owners.add(owner)
    return followups


def _clear_rows(db: Database, settings: Settings, job_id: uuid.UUID, worker: str) -> bool:
    """Delete the rows an earlier run of the job stored (an operator's retry leaves them to us), a chunk
    per transaction, the lease extended with each; False when the lease was lost. A first run has none:
    one index probe."""

    def still_ours(session: Session) -> bool:
        return jobs.heartbeat(session, job_id, worker, settings.lease_seconds, None) is not None

    return retry_on_db_error(lambda: rows.delete_rows(db, job_id, still_ours)[1], settings.lease_seconds)


def _run_claimed_job(
    db: Database,
    settings: Settings,
    job_id: uuid.UUID,
    worker: str,
    kind: str,
    params: dict[str, Any],
    time_limit: float,
) -> Messages:
    followups = Messages()
    spec = get_kind(kind)
    flushed: list[dict[str, Any] | None] = [None]  # the progress last stored (a change is an event)

    def beat(session: Session, progress: dict[str, Any] | None) -> bool | None:
        changed = progress is not None and progress != flushed[0]
        stop = jobs.heartbeat(session, job_id, worker, settings.lease_seconds, progress, changed=changed)
        flushed[0] = progress
        return stop

    made: list[rows.RowData] | None = None  # the rows of a kind with rows solved whole
    if spec.sharded:
        if not _clear_rows(db, settings, job_id, worker):
            log.warning("job %s: lease lost while its old rows were deleted", job_id)
            return followups
        outcome = run_watched(
            db, settings, beat, spec, time_limit, lambda run: spec.puzzle().plan(params, run)
        )
        if outcome.status == Ending.OK:

            def store_plan() -> list[int]:
                with db.session() as session:
                    return shards.create_shards(session, job_id, worker, outcome.value)

            try:  # the shards are held: they go in their client's turn (execute names the client)
                retry_on_db_error(store_plan, settings.lease_seconds)
            except shards.LeaseLost:
                log.warning("job %s: lease lost before its plan could be stored", job_id)
                return followups
            if not outcome.value:
                followups.finalize.append(job_id)
            return followups
    else:
        # a kind with rows solved whole: its rows are stored with its result, in one transaction
        if spec.rows is not None:
            if not _clear_rows(db, settings, job_id, worker):
                log.warning("job %s: lease lost while its old rows were deleted", job_id)
                return followups
            made = []
        outcome = run_watched(
            db,
            settings,
            beat,
            spec,
            time_limit,
            lambda run: spec.solve_function()(params, run),
            on_rows=made.extend if made is not None else None,
        )
    if outcome.status == Ending.LOST:
        return followups
    state = OUTCOME_STATES[outcome.status]
    stored = results.split(
        spec.dump_result(outcome.value) if outcome.status == Ending.OK else None,
        spec.result_items,
        settings.max_result_bytes,
    )
    kept = made if made is not None and state == JobState.SUCCEEDED else None

    def store_outcome() -> bool:
        with db.session() as session:
            finished = jobs.finish(
                session,
                job_id,
                worker,
                state=state,
                result=stored.result,
                error=outcome.error,
                progress=outcome.progress,
                rows_stored=len(kept) if kept is not None else None,
            )
            if finished:
                results.store_items(session, job_id, stored.items)
                if kept:
                    rows.copy_rows(session, job_id, kept)
            return finished

    if not retry_on_db_error(store_outcome, settings.lease_seconds):
        log.warning("job %s: lease lost before its outcome could be stored", job_id)
    return followups


def execute_shard(
    db: Database,
    settings: Settings,
    shard_id: int,
    worker: str,
    release: Callable[[set[int]], None] = lambda owners: None,
    task_id: str | None = None,
) -> Messages:
    """Claim and run a shard; then, for up to `settings.shard_chain_seconds`, its job's next held shards,
    each claimed in the transaction that stores the one before, while no other client's shard and no
    interactive work (a job, a retried shard, a finalize) was sent and waits (store.shards decides, from
    the rows). What follows is published once, after the last; but a shard that adds shards (a split,
    the rest of a slice) has its client's held work released at once (`release`), so that idle processes
    need not wait for the chain to end."""
    followups = Messages()
    began = time.time()
    with db.session(prepared=True) as session:
        shard = shards.claim_shard(session, shard_id, worker, settings.lease_seconds, settings.max_attempts)
    if shard is None:
        log.info(NOTHING_TO_CLAIM, "shard", shard_id)
    chain_until = time.monotonic() + settings.shard_chain_seconds

    def chain() -> bool:
        return time.monotonic() < chain_until

    while shard is not None:
        owner = shard.owner_id
        followups.owners.add(owner)  # its client's next held shard may go once this one ends
        # a shard's few statements, thousands of times a job: the shard's span, not theirs
        with tracing.job_span("zolve.shard", shard.trace_parent, _shard_attributes(shard, worker), sql=False):
            shard, began, added = _run_claimed_shard(
                db, settings, shard, worker, began, followups, chain, task_id
            )
        if added and shard is not None:
            release({owner})
    return followups


def _shard_attributes(shard: shards.ClaimedShard, worker: str) -> dict[str, Any]:
    return {
        "zolve.job_id": str(shard.job_id),
        "zolve.shard_id": shard.id,
        "zolve.shard_key": shard.key,
        "zolve.attempt": shard.attempts,
        "zolve.worker": worker,
    }


def _run_claimed_shard(
    db: Database,
    settings: Settings,
    shard: shards.ClaimedShard,
    worker: str,
    began: float,
    followups: Messages,
    chain: Callable[[], bool],
    task_id: str | None,
) -> tuple[shards.ClaimedShard | None, float, bool]:
    """Run a claimed shard and store how it ended; returns the job's next shard if the store took one
    (`chain()` asked for it), when that one's claim was committed, and whether the shard added
    shards."""
    claimed = time.time()
    shard_id = shard.id

    def beat(session: Session, progress: dict[str, Any] | None) -> bool | None:
        return shards.heartbeat_shard(session, shard_id, worker, settings.lease_seconds)

    if shard.time_limit <= 0:
        used_up = "the job's shards have used its whole time_limit of solve time"
        error = JobError(ErrorType.TIME_LIMIT, used_up)
        with db.session() as session:
            shards.fail_shard(session, shard_id, worker, error)
        return None, claimed, False
    spec = get_kind(shard.kind)
    puzzle = spec.puzzle()
    outcome = run_watched(
        db,
        settings,
        beat,
        spec,
        shard.time_limit,
        lambda run: puzzle.run_shard(shard.params, shard.key, run),
        slice_seconds=settings.shard_slice_seconds or None,
    )
    if outcome.status == Ending.LOST:
        return None, claimed, False
    ran = time.time()
    try:
        following = retry_on_db_error(
            lambda: _store_shard(db, settings, shard, worker, outcome, followups, chain),
            settings.lease_seconds,
        )
    except DBAPIError:
        raise
    except Exception as exc:  # e.g. a bug in storing the rows: fail the shard (and job) with the error
        log.exception("shard %s could not be stored", shard_id)
        with db.session() as session:
            shards.fail_shard(session, shard_id, worker, JobError.from_exception(exc))
        following = None
    stored = time.time()
    _log_shard_timing(shard, outcome, began, (claimed, ran, stored), task_id)
    added = outcome.status == Ending.OK and bool(outcome.value.split or outcome.value.rest)
    return following, stored, added


def _store_shard(
    db: Database,
    settings: Settings,
    shard: shards.ClaimedShard,
    worker: str,
    outcome: Watched,
    followups: Messages,
    chain: Callable[[], bool],
) -> shards.ClaimedShard | None:
    """One transaction: how the shard ended and, when it ended well and `chain()`, the claim of its
    job's next held shard."""
    # asked before the transaction holds any lock
    chain_lease = settings.lease_seconds if outcome.status == Ending.OK and chain() else None
    with db.session(prepared=True) as session:
        if outcome.status == Ending.CANCELLED:
            shards.stop_shard(session, shard.id, worker)
            return None
        if outcome.status == Ending.FAILED:
            assert outcome.error is not None  # run_watched gives every failure its error
            shards.fail_shard(session, shard.id, worker, outcome.error)
            return None
        shards.commit_without_flush_wait(session)
        result = outcome.value
        if result.split:  # the new shards are held: they go in their client's turn, or to the chain
            if not shards.split_shard(session, shard.id, worker, result.split, outcome.seconds):
                return None
            if chain_lease is None:
                return None
            return shards.claim_next_held(session, shard.job_id, worker, chain_lease)
        done = shards.complete_shard(
            session,
            shard.id,
            worker,
            result.rows,
            result.summary,
            outcome.seconds,
            result.rest or (),
            chain_lease=chain_lease,
        )
        if done.last:
            followups.finalize = [shard.job_id]
        return done.next


#: one line per shard run (`bench/planetx_enumerate.py` reads them for the split of a job's worker time)
SHARD_TIMING = "shard timing"


def _log_shard_timing(
    shard: shards.ClaimedShard,
    outcome: Watched,
    began: float,
    marks: tuple[float, float, float],
    task_id: str | None,
) -> None:
    """The shard's claim, run and store in ms (`marks`: when each ended), with what the run reported of
    its phases (the puzzle's `run.progress` at its end: e.g. `walk_ms`, `histogram_ms`), when it began
    and ended (epoch seconds) and in which process and Celery task (`task_id`): the task's own
    "succeeded in" line less this span is the dispatch after the shard (the messages sent, held work
    released); a process's gap from one task's end to its next shard's beginning is Celery's (the ack,
    the next message)."""
    rows_stored = len(outcome.value.rows) if outcome.status == Ending.OK and outcome.value is not None else 0
    claimed, ran, stored = marks
    phases = {k: v for k, v in (outcome.progress or {}).items() if k.endswith("_ms")}
    log.info(
        "%s %s",
        SHARD_TIMING,
        json.dumps(
            {
                "job": str(shard.job_id),
                "shard": shard.id,
                "key": shard.key,
                "pid": os.getpid(),
                "task": task_id,
                "status": outcome.status,
                "rows": rows_stored,
                "began": round(began, 4),
                "ended": round(stored, 4),
                "claim_ms": round((claimed - began) * 1000, 2),
                "run_ms": round((ran - claimed) * 1000, 2),
                "store_ms": round((stored - ran) * 1000, 2),
                **phases,
            }
        ),
    )


def finalize(db: Database, settings: Settings, job_id: uuid.UUID) -> None:
    """Combine every shard's summary into the job's result (idempotent; a duplicate does nothing).

    An error fails the job with it; a finalize that keeps dying (killed process) fails the job after
    `max_attempts`, instead of being sent again by every sweep."""
    with db.session() as session:
        start = shards.start_finalize(session, job_id, settings.max_attempts)
    if start is not shards.FinalizeStart.RUN:
        return
    try:
        with db.session() as session:
            job = shards.lock_for_finalize(session, job_id)
            if job is None:
                return
            with tracing.job_span("zolve.finalize", job.trace_parent, {"zolve.job_id": str(job_id)}):
                spec = get_kind(job.kind)
                summaries = shards.summaries(session, job_id)
                result = spec.dump_result(spec.puzzle().combine(job.params, summaries))
                stored = results.split(result, spec.result_items, settings.max_result_bytes)
                if shards.finish_sharded_job(session, job_id, stored.result):
                    results.store_items(session, job_id, stored.items)
    except DBAPIError as exc:
        if _transient(exc):
            raise  # the database is away: Celery retries; start_finalize counts each attempt
        _fail_finalize(db, job_id, exc)
    except Exception as exc:
        _fail_finalize(db, job_id, exc)


def compact_rows(db: Database, job_id: uuid.UUID) -> None:
    """Merge a succeeded job's blocks into runs in key order (store.rows.compact). It runs after the job's
    success, which its client sees without waiting for it: pages and exports read the blocks correctly
    before and after. A finalize delivered again (its worker died here) merges then."""
    rows.compact(db, job_id, lambda session: shards.lock_succeeded(session, job_id))


def _fail_finalize(db: Database, job_id: uuid.UUID, exc: Exception) -> None:
    log.exception("finalize of job %s failed", job_id)
    with db.session() as session:
        shards.fail_job(session, job_id, JobError(type(exc).__name__, f"finalize: {exc}"))


def _transient(exc: DBAPIError) -> bool:
    return exc.connection_invalidated or isinstance(exc, OperationalError)


def retry_on_db_error(action: Callable[[], T], within: float) -> T:
    """Retry an action while the database is unreachable (e.g. restarting), for up to `within` seconds
    (the lease that keeps the work ours meanwhile); then its last error is raised."""
    retrying = Retrying(
        retry=retry_if_exception(lambda exc: isinstance(exc, DBAPIError) and _transient(exc)),
        wait=wait_exponential(multiplier=0.2, max=5.0),
        stop=stop_before_delay(within),
        before_sleep=_log_db_retry,
        reraise=True,
    )
    return retrying(action)


def _log_db_retry(state: RetryCallState) -> None:
    pause = state.next_action.sleep if state.next_action is not None else 0.0
    log.warning("database unavailable, retrying in %.1f s", pause)

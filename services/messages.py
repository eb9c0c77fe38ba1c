"""Wake-up messages, published the one way every caller (API, batches, dashboard, workers, sweeper) does
it: after the transaction that made them necessary has committed. A message the broker refuses is marked
unsent in its row, and the next sweep sends it, whatever the broker's queue holds meanwhile."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from services.context import Broker, Context
from store import dispatch, jobs, webhooks
from store.db import Database
from store.dispatch import Released

log = logging.getLogger("zolve.publish")

#: the tasks a message names (the workers define them) and the one queue they travel on
RUN_JOB = "zolve.run_job"
RUN_SHARD = "zolve.run_shard"
FINALIZE = "zolve.finalize"
PURGE = "zolve.purge"
QUEUE = "zolve"
#: jobs that ask for a short time limit (Settings.short_job_seconds) travel on a lane of their own, which
#: the solver workers take besides QUEUE and a process or two take alone (`zolve up --short-lane`): no
#: long job can occupy those, so a short job never waits for one however long the other clients' jobs
SHORT_QUEUE = "zolve.short"
#: what a solver worker consumes (`zolve worker --queues`)
SOLVER_QUEUES = f"{QUEUE},{SHORT_QUEUE}"
#: webhook deliveries travel on a queue of their own: never behind (or in the way of) solver work
DELIVER = "zolve.deliver_webhook"
WEBHOOK_QUEUE = "zolve.webhooks"


#: Redis priorities (0 first): a worker process that frees up takes any job or finalize before the next
#: shard of a bulk job, so interactive work waits at most for one shard (a few seconds) to end; a shard
#: whose worker died goes before fresh shards, since its job waits on it
INTERACTIVE_PRIORITY = 0
RETRIED_SHARD_PRIORITY = 3
BULK_PRIORITY = 6

#: a message to publish: (task, its job or shard id, priority, queue)
_Pending = tuple[str, uuid.UUID | int, int | None, str]


def enqueue(
    broker: Broker, target: str, task: str = RUN_JOB, priority: int | None = None, queue: str = QUEUE
) -> None:
    """Publish one wake-up message (a job id, or a shard id for RUN_SHARD). Raises when the broker is
    unreachable."""
    if priority is None:
        priority = BULK_PRIORITY if task in (RUN_SHARD, PURGE) else INTERACTIVE_PRIORITY
    broker.send_task(task, args=[target], queue=queue, priority=priority)


@dataclass
class Messages:
    """What to publish: jobs to run, shards to run, sharded jobs to finalize; and the clients whose held
    work may now go (see store.dispatch): they submitted, or something of theirs finished."""

    jobs: list[uuid.UUID] = field(default_factory=list)
    shards: list[int] = field(default_factory=list)
    finalize: list[uuid.UUID] = field(default_factory=list)
    owners: set[int] = field(default_factory=set)
    #: shards to run again after their worker died: ahead of fresh shards
    retried_shards: list[int] = field(default_factory=list)
    #: the time limits of jobs already read (a release returns them): their lane needs no query
    time_limits: dict[uuid.UUID, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.jobs or self.shards or self.finalize or self.owners or self.retried_shards)


def send(ctx: Context, messages: Messages) -> None:
    """Publish the messages, then release and publish the held work of `messages.owners` that fits
    their windows (once the transaction that changed their work has committed: the caller's); and any
    webhook delivery a finished job left (see publish_deliveries)."""
    publish(ctx, messages)
    publish_deliveries(ctx.broker, ctx.db)
    release_in_turn(ctx, messages.owners)


def release_in_turn(ctx: Context, owners: Collection[int]) -> None:
    """Release and publish these clients' held work that fits their windows (a new submission's, say);
    a failure leaves it to the sweeper."""
    if not owners:
        return
    try:
        release(ctx, owners)
    except Exception:  # what was committed stands: the sweeper releases it within a sweep
        log.warning("could not release held work of %s; the sweeper will", owners, exc_info=True)


def release(ctx: Context, owners: Collection[int] | None = None) -> Released:
    """Release held work in turn (every client's when `owners` is None) and publish it."""
    with ctx.db.session() as session:
        released = release_within(ctx, session, owners)
    publish_released(ctx, released)
    return released


def release_within(
    ctx: Context,
    session: Session,
    owners: Collection[int] | None,
    *,
    shards: bool = True,
    locked: bool = False,
) -> Released:
    """dispatch.release in the caller's transaction (a submit's: its job goes in the transaction that
    inserts it); the caller publishes what it returns with publish_released once that has committed.
    `locked`: the transaction holds the owners' locks already (store.jobs.lock_owner)."""
    # no fixed window: the release's statement reads the live workers itself
    window = ctx.settings.max_in_flight_per_key or None
    alive_within = ctx.settings.worker_alive_within
    return dispatch.release(session, window, owners, shards=shards, alive_within=alive_within, locked=locked)


def publish_released(ctx: Context, released: Released) -> bool:
    return publish(
        ctx,
        Messages(
            jobs=released.jobs,
            shards=released.shards,
            retried_shards=released.retried_shards,
            time_limits=released.time_limits,
        ),
    )


def recover_lost_messages(ctx: Context) -> Released:
    """The broker lost every message it held (e.g. Redis restarted without persistence): mark what waits
    for one unsent and release it again at once, in each client's turn. Duplicates of messages that did
    survive are harmless: every claim is a compare-and-set."""
    with ctx.db.session() as session:
        jobs.forget_published(session)
    released = release(ctx)
    resent = len(released.jobs) + len(released.shards) + len(released.retried_shards)
    log.log(
        logging.WARNING if resent else logging.INFO,
        "the broker lost its messages (or is new): re-sent %d jobs and shards",
        resent,
    )
    return released


def publish(ctx: Context, messages: Messages) -> bool:
    """Send every message; False when the broker refused one (it and the rest are then marked unsent)."""
    short = _short_jobs(ctx, messages.jobs, messages.time_limits)
    pending: list[_Pending] = [
        (RUN_JOB, target, None, SHORT_QUEUE if target in short else QUEUE) for target in messages.jobs
    ]
    pending += [(RUN_SHARD, target, RETRIED_SHARD_PRIORITY, QUEUE) for target in messages.retried_shards]
    pending += [(RUN_SHARD, target, None, QUEUE) for target in messages.shards]
    pending += [(FINALIZE, target, None, QUEUE) for target in messages.finalize]
    for index, (task, target, priority, queue) in enumerate(pending):
        try:
            enqueue(ctx.broker, str(target), task, priority, queue)
        except Exception:
            _mark_unsent(ctx.db, [(task, target) for task, target, *_ in pending[index:]])
            return False
    return True


def _short_jobs(
    ctx: Context, job_ids: list[uuid.UUID], known: dict[uuid.UUID, float] | None = None
) -> set[uuid.UUID]:
    """The jobs that go on the short lane (`known`: time limits already read; the others are read
    here); none when the database cannot say (they run on the solver pool then, as every job did before
    the lane)."""
    within = ctx.settings.short_job_seconds
    if not job_ids or within <= 0:
        return set()
    known = known or {}
    short = {job_id for job_id in job_ids if job_id in known and known[job_id] <= within}
    unknown = [job_id for job_id in job_ids if job_id not in known]
    if not unknown:
        return short
    try:
        with ctx.db.session() as session:
            return short | jobs.short_jobs(session, unknown, within)
    except Exception:
        log.warning("could not read the time limits of %d jobs; they go on the solver queue", len(unknown))
        return short


def _mark_unsent(db: Database, unsent: list[tuple[str, uuid.UUID | int]]) -> None:
    log.warning("broker unavailable; %d messages left to the sweeper", len(unsent))
    try:
        with db.session() as session:
            jobs.mark_unsent(
                session,
                job_ids=[t for task, t in unsent if task == RUN_JOB and isinstance(t, uuid.UUID)],
                shard_ids=[t for task, t in unsent if task == RUN_SHARD and isinstance(t, int)],
                finalize_ids=[t for task, t in unsent if task == FINALIZE and isinstance(t, uuid.UUID)],
            )
    except Exception:
        # both servers away: the rows still look sent, and count as lost after requeue_after
        log.warning("could not mark %d unsent messages", len(unsent), exc_info=True)


def enqueue_delivery(broker: Broker, delivery_id: int, countdown: float | None = None) -> None:
    broker.send_task(DELIVER, args=[str(delivery_id)], queue=WEBHOOK_QUEUE, countdown=countdown)


def publish_deliveries(broker: Broker, db: Database) -> int:
    """Publish the webhook deliveries not yet published: those of jobs that finished in transactions
    committed before this call (the finishing code calls it next, the sweeper as a fallback). A delivery
    the broker refused stays unsent for the next call."""
    try:
        with db.session() as session:
            unsent = webhooks.claim_unsent(session)
    except Exception:
        log.warning("could not read unsent webhook deliveries; the sweeper will", exc_info=True)
        return 0
    for index, delivery_id in enumerate(unsent):
        try:
            enqueue_delivery(broker, delivery_id)
        except Exception:
            with db.session() as session:
                webhooks.mark_unsent(session, unsent[index:])
            return index
    return len(unsent)

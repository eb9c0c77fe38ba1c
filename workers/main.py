"""The worker process: Celery tasks, a sweeper thread, and per-process setup."""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from celery import Celery, Task, bootsteps
from celery.signals import worker_process_init, worker_process_shutdown, worker_shutdown
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from core import tracing
from core.config import Settings
from core.outages import Outage
from kinds import KINDS
from services import retention, sweeping, webhooks
from services.context import Context
from services.messages import (
    DELIVER,
    FINALIZE,
    PURGE,
    RUN_JOB,
    RUN_SHARD,
    enqueue,
    enqueue_delivery,
    publish_deliveries,
    recover_lost_messages,
    release_in_turn,
    send,
)
from services.outages import server_away
from services.running import compact_rows, execute, execute_shard, finalize
from store import heartbeats, jobs
from store.db import Database
from store.leader import Leadership
from workers import broker_fixes
from workers.app import broker_was_emptied, make_celery, mark_broker

log = logging.getLogger("zolve.worker")


#: this start of the worker (its pool processes inherit it): with host and pid, a process's identity
BOOT_ID = uuid.uuid4().hex[:8]


def worker_id() -> str:
    """The name this process leases work under (see store.heartbeats)."""
    return heartbeats.process_name(socket.gethostname(), os.getpid(), BOOT_ID)


def limit_z3_memory(settings: Settings) -> None:
    """Z3's global memory ceiling for this process (idempotent, cheap)."""
    if settings.z3_max_memory_mb:
        import z3

        z3.set_param("memory_max_size", settings.z3_max_memory_mb)


def recover_emptied_broker(celery: Celery, ctx: Context) -> bool:
    """Re-send at once what waits for a message, if the broker lost its messages (see
    workers.app.broker_was_emptied). Called on every broker (re)connection and sweep. Two workers may
    both do it after one loss: the second only sends duplicates, which are harmless."""
    if not broker_was_emptied(celery):
        return False
    recover_lost_messages(ctx)
    mark_broker(celery)
    return True


class DatabaseHealth:
    """Since when this process has reached the database without a failure. A worker whose heartbeats
    stopped counts as dead only once the sweeper itself has had the database for a while: after an
    outage every process was silent, and live ones renew their leases within a watch interval of its
    end."""

    def __init__(self) -> None:
        self.ok_since: float | None = None

    def failed(self) -> None:
        self.ok_since = None

    def ok(self) -> None:
        if self.ok_since is None:
            self.ok_since = time.monotonic()

    def steady_for(self, seconds: float) -> bool:
        return self.ok_since is not None and time.monotonic() - self.ok_since >= seconds


#: this process's sweeper's view of the database
SWEEPER_HEALTH = DatabaseHealth()


def sweep_once(
    celery: Celery, db: Database, settings: Settings, health: DatabaseHealth = SWEEPER_HEALTH
) -> jobs.SweepReport:
    try:
        report = _sweep(celery, db, settings, health.steady_for(settings.worker_alive_within))
    except Exception:
        health.failed()
        raise
    health.ok()
    return report


def lead_sweeps(celery: Celery, db: Database, settings: Settings, leadership: Leadership) -> None:
    """A sweep, if this process leads the sweeps now. A follower keeps its view of the database too, so
    that when it takes over it may judge silent workers at once (see DatabaseHealth)."""
    if leadership.held():
        sweep_once(celery, db, settings)
    elif leadership.reached:
        SWEEPER_HEALTH.ok()
    else:
        SWEEPER_HEALTH.failed()


def _sweep(celery: Celery, db: Database, settings: Settings, judge_silence: bool) -> jobs.SweepReport:
    """A broker that lost its data has every waiting row re-sent at once; then the sweep itself
    (services.sweeping). The broker's contents are never read."""
    ctx = Context(db, settings, celery)
    recover_emptied_broker(celery, ctx)
    return sweeping.sweep(ctx, judge_silence)


def timer_step(
    name: str, interval: float, tick: Callable[[Any], None], requires: tuple[str, ...] = ()
) -> type[bootsteps.StartStopStep]:
    """A worker bootstep that calls `tick(worker)` every `interval` seconds on the worker's own timer
    (the sweeper, the heartbeat, the purge). A failing tick is tried again next interval, and logged once
    while a server it needs is away (core.outages).

    Not a thread: with the prefork pool the parent forks replacement children at any time, and a fork
    while a thread holds a lock (the import lock, a connection pool's) leaves the child deadlocked. The
    timer runs in the parent's event loop, never at the same moment as a fork.
    """

    outage = Outage(log, name, server_away)

    def safe_tick(worker: Any) -> None:
        try:
            tick(worker)
        except Exception as error:
            outage.failed(error)
        else:
            outage.succeeded()

    def start(self: Any, worker: Any) -> None:
        self.tref = worker.timer.call_repeatedly(interval, safe_tick, args=(worker,), priority=10)

    def stop(self: Any, worker: Any) -> None:
        if getattr(self, "tref", None) is not None:
            self.tref.cancel()

    attributes = {
        "name": f"zolve.{name}",
        "requires": {"celery.worker.components:Timer", *requires},
        "start": start,
        "stop": stop,
    }
    return type(name.title().replace(" ", ""), (bootsteps.StartStopStep,), attributes)


def pool_pids(worker: object) -> list[int]:
    """The processes that run this worker's tasks: the pool's children, or the worker itself (solo,
    threads)."""
    pool = getattr(worker, "pool", None)
    info = pool.info if pool is not None else {}
    return list(info.get("processes") or []) or [os.getpid()]


def beat(db: Database, worker: Any, solves: bool) -> None:
    """Record this worker's task processes in the `workers` table (the dashboard's "workers alive",
    /ready's worker check; the dispatch window, when they `solve`)."""
    with db.session() as session:
        heartbeats.beat(session, socket.gethostname(), pool_pids(worker), BOOT_ID, worker.hostname, solves)


def announce(db: Database, solves: bool) -> None:
    """A new pool process registers itself before it takes work (its parent beats for it after)."""
    try:
        with db.session() as session:
            heartbeats.register(session, socket.gethostname(), os.getpid(), BOOT_ID, solves)
    except Exception:
        log.warning("could not register this process; its parent's next heartbeat will", exc_info=True)


def stop_beating(db: Database) -> None:
    """At a clean shutdown: this worker's processes are stopped now (else the dispatch window and /ready
    count them for a lease of silence)."""
    try:
        with db.session() as session:
            heartbeats.stop(session, BOOT_ID)
    except Exception:
        log.warning("could not mark this worker stopped; its silence will", exc_info=True)


def broker_connection_step(celery: Celery, ctx: Context) -> type[bootsteps.StartStopStep]:
    """A consumer bootstep: each time the worker (re)connects to the broker, re-send what a broker that
    lost its data lost, without waiting for the next sweep."""

    def start(self: Any, consumer: Any) -> None:
        try:
            recover_emptied_broker(celery, ctx)
        except Exception:
            log.warning("could not re-send lost messages; the next sweep will", exc_info=True)

    attributes = {
        "name": "zolve.broker_connection",
        "requires": {"celery.worker.consumer.connection:Connection"},
        "start": start,
    }
    return type("BrokerConnection", (bootsteps.StartStopStep,), attributes)


def purge_expired(db: Database, settings: Settings) -> None:
    if settings.retention_days <= 0:
        return
    report = retention.purge(db, timedelta(days=settings.retention_days))
    if report.jobs or report.batches:
        log.info(
            "purge: %d jobs (%d rows, %d shards, %d events), %d batches",
            report.jobs,
            report.rows,
            report.shards,
            report.events,
            report.batches,
        )


@contextmanager
def _database_errors_retryable() -> Iterator[None]:
    """A dropped connection surfaces as a DBAPIError; make it one Celery retries with backoff."""
    try:
        yield
    except DBAPIError as exc:
        if exc.connection_invalidated:
            raise OperationalError(str(exc), None, exc.orig or exc) from exc
        raise


def create_worker_app(settings: Settings, solves: bool = True) -> Celery:
    """The worker's Celery app. `solves`: it consumes a solver queue (not only webhook deliveries)."""
    broker_fixes.install()
    celery = make_celery(settings)
    database_url, _ = settings.require_urls()
    db = Database(database_url, pool_size=2)
    ctx = Context(db, settings, celery)

    retry_options = {
        "autoretry_for": (OperationalError, InterfaceError),
        "retry_backoff": True,
        "retry_backoff_max": 30,
        "max_retries": 30,
    }

    @celery.task(name=RUN_JOB, **retry_options)
    def run_job(job_id: str) -> None:
        limit_z3_memory(settings)
        with _database_errors_retryable():
            send(ctx, execute(db, settings, uuid.UUID(job_id), worker_id()))

    @celery.task(name=RUN_SHARD, bind=True, **retry_options)
    def run_shard(task: Task, shard_id: str) -> None:
        limit_z3_memory(settings)
        with _database_errors_retryable():
            followups = execute_shard(
                db,
                settings,
                int(shard_id),
                worker_id(),
                release=lambda owners: release_in_turn(ctx, owners),
                task_id=task.request.id,
            )
            send(ctx, followups)

    @celery.task(name=FINALIZE, **retry_options)
    def finalize_job(job_id: str) -> None:
        with _database_errors_retryable():
            finalize(db, settings, uuid.UUID(job_id))
        publish_deliveries(celery, db)
        with _database_errors_retryable():
            compact_rows(db, uuid.UUID(job_id))

    @celery.task(name=DELIVER, **retry_options)
    def deliver_webhook(delivery_id: str) -> None:
        with _database_errors_retryable():
            retry_in = webhooks.deliver(ctx, int(delivery_id))
        if retry_in is not None:  # the next attempt; lost with this worker, the sweeper sends it again
            enqueue_delivery(celery, int(delivery_id), countdown=retry_in)

    @celery.task(name=PURGE)
    def purge(_: str = "") -> None:
        purge_expired(db, settings)

    # each pool process traces on its own (core.tracing), from before its first SQL, and flushes its
    # spans before it exits
    worker_process_init.connect(lambda **_: tracing.start("zolve-worker"), weak=False)
    worker_process_shutdown.connect(lambda **_: tracing.stop(), weak=False)
    worker_process_init.connect(lambda **_: announce(db, solves), weak=False)
    worker_shutdown.connect(lambda **_: stop_beating(db), weak=False)
    celery.steps["consumer"].add(broker_connection_step(celery, ctx))
    steps = celery.steps["worker"]
    # one sweeper at a time (store.leader); a node that leads sweeps, the others only try to lead
    leadership = Leadership(db, silent_after=3 * settings.sweep_interval)
    steps.add(
        timer_step(
            "sweeper", settings.sweep_interval, lambda _: lead_sweeps(celery, db, settings, leadership)
        )
    )
    pool = ("celery.worker.components:Pool",)
    steps.add(timer_step("heartbeat", settings.sweep_interval, lambda worker: beat(db, worker, solves), pool))
    # the timer only asks: the purge itself runs as a task in a pool process, so a long one never holds
    # up this process's loop (its sweeps, heartbeats and the tasks it hands out)
    steps.add(timer_step("purge", settings.purge_interval, lambda _: enqueue(celery, "", PURGE)))
    # import Z3 and every solver in the parent, so recycled pool children start warm
    for kind in KINDS.values():
        kind.solve_function()
        if kind.sharded:
            kind.puzzle()
    return celery

"""The worker process: Celery tasks, a sweeper thread, and per-process setup."""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid

from celery import Celery, signals
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from store import jobs
from store.db import Database
from workers.app import RUN_JOB, SWEEP, enqueue, make_celery
from workers.runner import execute
from zolve.config import Settings

log = logging.getLogger("zolve.worker")


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def sweep_once(celery: Celery, db: Database, settings: Settings) -> jobs.SweepReport:
    """Fail, cancel or requeue what expired leases left behind, and (re)publish wake-up messages."""
    with db.session() as session:
        report = jobs.sweep(session, max_attempts=settings.max_attempts, requeue_after=settings.requeue_after)
    for job_id in report.to_enqueue:
        try:
            enqueue(celery, str(job_id))
        except Exception:
            log.warning("broker unavailable; job %s stays queued for the next sweep", job_id)
            with db.session() as session:
                jobs.mark_not_enqueued(session, job_id)
    if report.to_enqueue or report.failed or report.cancelled:
        log.info(
            "sweep: enqueued %d, failed %d, cancelled %d",
            len(report.to_enqueue),
            len(report.failed),
            len(report.cancelled),
        )
    return report


class Sweeper(threading.Thread):
    """Runs `sweep_once` every `sweep_interval` seconds in the worker's main process."""

    def __init__(self, celery: Celery, db: Database, settings: Settings):
        super().__init__(name="zolve-sweeper", daemon=True)
        self.celery, self.db, self.settings = celery, db, settings
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self.settings.sweep_interval):
            try:
                sweep_once(self.celery, self.db, self.settings)
            except Exception:
                log.warning("sweep failed; retrying next interval", exc_info=True)

    def stop(self) -> None:
        self._stopped.set()


def create_worker_app(settings: Settings) -> Celery:
    celery = make_celery(settings)
    database_url, _ = settings.require_urls()
    db = Database(database_url, pool_size=2)

    @celery.task(
        name=RUN_JOB,
        autoretry_for=(OperationalError, InterfaceError),
        retry_backoff=True,
        retry_backoff_max=30,
        max_retries=30,
    )
    def run_job(job_id: str) -> str | None:
        try:
            return execute(db, settings, uuid.UUID(job_id), worker_id())
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise OperationalError(str(exc), None, exc.orig) from exc
            raise

    @celery.task(name=SWEEP)
    def sweep() -> None:
        sweep_once(celery, db, settings)

    sweeper = Sweeper(celery, db, settings)

    @signals.worker_process_init.connect(weak=False)
    def _init_process(**_: object) -> None:
        import z3

        if settings.z3_max_memory_mb:
            z3.set_param("memory_max_size", settings.z3_max_memory_mb)

    @signals.worker_ready.connect(weak=False)
    def _start_sweeper(sender: object = None, **_: object) -> None:
        if getattr(sender, "app", celery) is celery and not sweeper.is_alive():
            sweeper.start()

    @signals.worker_shutdown.connect(weak=False)
    def _stop_sweeper(**_: object) -> None:
        sweeper.stop()

    return celery

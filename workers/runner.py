"""Running one claimed job: the puzzle in this thread, a watcher thread beside it.

The watcher heartbeats the lease, flushes progress and, when the job is cancelled or the lease is lost,
interrupts Z3 through the run (Celery's own time limits cannot stop a running `check()`).
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError

from puzzles.runtime import Cancelled, Run, TimeLimitExceeded
from store import jobs
from store.db import Database
from zolve.config import Settings
from zolve.kinds import get_kind

log = logging.getLogger("zolve.worker")
T = TypeVar("T")


class Watcher(threading.Thread):
    def __init__(self, db: Database, settings: Settings, job_id: uuid.UUID, worker: str, time_limit: float):
        super().__init__(name=f"watch-{job_id}", daemon=True)
        self.db, self.settings, self.job_id, self.worker = db, settings, job_id, worker
        self.latest_progress: dict[str, Any] | None = None
        self.solve_run = Run(time_limit=time_limit, on_progress=self.report)
        self._stopped = threading.Event()

    def report(self, progress: dict[str, Any]) -> None:
        self.latest_progress = progress

    def run(self) -> None:  # noqa: D102 - Thread.run
        while not self._stopped.wait(self.settings.watch_interval):
            try:
                with self.db.session() as session:
                    cancel = jobs.heartbeat(
                        session, self.job_id, self.worker, self.settings.lease_seconds, self.latest_progress
                    )
            except Exception:  # the database may be restarting: the lease has slack, keep trying
                log.warning("heartbeat for job %s failed", self.job_id, exc_info=True)
                continue
            if cancel is None:
                log.warning("job %s: lease lost, stopping", self.job_id)
                self.solve_run.stop("lease lost")
            elif cancel:
                self.solve_run.stop("cancelled")

    def stop(self) -> None:
        self._stopped.set()


def execute(db: Database, settings: Settings, job_id: uuid.UUID, worker: str) -> str | None:
    """Claim and run a job. Returns its final state, or None when the message was a no-op."""
    with db.session() as session:
        job = jobs.claim(session, job_id, worker, settings.lease_seconds)
        if job is None:
            return None
        kind, params, time_limit = job.kind, job.params, job.time_limit

    spec = get_kind(kind)
    watcher = Watcher(db, settings, job_id, worker, time_limit)
    run = watcher.solve_run
    outcome: dict[str, Any]
    watcher.start()
    try:
        with run:
            result = spec.solve_function()(params, run)
        outcome = {"state": "succeeded", "result": spec.dump_result(result)}
    except Cancelled as stop:
        outcome = {"state": "cancelled", "error": {"type": "Cancelled", "message": str(stop)}}
    except TimeLimitExceeded as exc:
        outcome = {"state": "failed", "error": {"type": "TimeLimitExceeded", "message": str(exc)}}
    except Exception as exc:  # a puzzle bug or a solver failure: record it, never lose it
        log.exception("job %s failed", job_id)
        outcome = {
            "state": "failed",
            "error": {"type": type(exc).__name__, "message": str(exc), "traceback": traceback.format_exc()},
        }
    finally:
        watcher.stop()
    if run.stop_reason == "lease lost":
        return None
    stored = retry_on_db_error(
        lambda: _store_outcome(db, job_id, worker, watcher.latest_progress, outcome), settings.lease_seconds
    )
    if not stored:
        log.warning("job %s: lease lost before its outcome could be stored", job_id)
        return None
    return outcome["state"]


def _store_outcome(
    db: Database, job_id: uuid.UUID, worker: str, progress: dict[str, Any] | None, outcome: dict[str, Any]
) -> bool:
    with db.session() as session:
        return jobs.finish(session, job_id, worker, progress=progress, **outcome)


def retry_on_db_error(action: Callable[[], T], within: float) -> T:
    """Retry an action while the database is unreachable (e.g. restarting), for up to `within` seconds."""
    deadline = time.monotonic() + within
    delay = 0.2
    while True:
        try:
            return action()
        except DBAPIError as exc:
            if not exc.connection_invalidated and not isinstance(exc, OperationalError):
                raise
            if time.monotonic() + delay > deadline:
                raise
            log.warning("database unavailable, retrying in %.1f s", delay)
            time.sleep(delay)
            delay = min(delay * 2, 5.0)

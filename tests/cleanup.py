"""No leftovers on the shared worker: the session has one database and one worker process (two slots), so a
job a test leaves unfinished holds a slot while the next tests wait for theirs, until their timeouts fire.

The service test directories (tests/api, tests/workers) import these fixtures in their conftest.py: each
test ends by cancelling the unfinished jobs of the keys made since its module began (its own keys and its
module's, e.g. from `make_key_module`; only ever keys of the shared database), then waits until those jobs
are final and, if the test ran with the worker, until the broker's queue has drained (the no-op messages of
cancelled shards), so that the next test starts with an idle worker. A job that will not stop is reported as
a warning naming the test; it never fails the test.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import func, select

from api.extension import zolve
from store import jobs as job_store
from store.db import Database
from store.models import ApiKey, Job
from tests.support import wait_until
from workers.app import queue_depth

UNFINISHED = ("queued", "running", "cancelling")
#: a running solve stops within about 2 s; a lease lost with a killed worker expires in 3 s (TEST_ENV)
FINAL_WITHIN = 60.0
#: cancelled shards' wake-up messages are no-ops, but an expert enumeration leaves about 1,300 of them
DRAIN_WITHIN = 180.0


class LeftoverWarning(UserWarning):
    """A test's jobs did not stop after the cleanup cancelled them."""


def last_key_id(db: Database) -> int:
    with db.session() as session:
        return session.scalar(select(func.coalesce(func.max(ApiKey.id), 0)))


def cancel_unfinished_jobs(db: Database, keys_above: int) -> list[uuid.UUID]:
    """Cancel every unfinished job owned by a key with an id above `keys_above`; returns their ids."""
    with db.session() as session:
        leftovers = session.scalars(
            select(Job).where(Job.owner_id > keys_above, Job.state.in_(UNFINISHED)).order_by(Job.created_at)
        ).all()
        for job in leftovers:
            job_store.request_cancel(session, job)
        return [job.id for job in leftovers]


def unfinished(db: Database, job_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    with db.session() as session:
        return list(session.scalars(select(Job.id).where(Job.id.in_(job_ids), Job.state.in_(UNFINISHED))))


def _described(db: Database, job_ids: list[uuid.UUID]) -> list[str]:
    """Each job as the warning names it: what it is, and where it stands."""
    with db.session() as session:
        jobs = session.scalars(select(Job).where(Job.id.in_(job_ids))).all()
        return [
            f"{job.id} {job.kind} {job.state} (attempts {job.attempts}, shards {job.shards_done}/"
            f"{job.shards_total}, params {str(job.params)[:200]})"
            for job in jobs
        ]


def settle(db: Database, keys_above: int, who: str, broker: Callable[[], Any] | None = None) -> None:
    """Cancel the unfinished jobs of the keys above `keys_above`, wait until they are final and, given a
    way to the broker (only when a worker runs, else nothing drains it), until its queue has drained."""
    cancelled = cancel_unfinished_jobs(db, keys_above)
    if not cancelled:
        return
    try:
        wait_until(lambda: not unfinished(db, cancelled), FINAL_WITHIN, 0.1, "the leftover jobs to stop")
    except AssertionError:
        still = "; ".join(_described(db, unfinished(db, cancelled)))
        message = f"{who} left jobs that did not stop within {FINAL_WITHIN} s: {still}"
        warnings.warn(LeftoverWarning(message), stacklevel=1)
        return
    if broker is None:
        return
    # their queued messages (a cancelled job's shards) are no-ops, but each still takes a worker slot
    celery = broker()
    try:
        wait_until(lambda: queue_depth(celery) in (0, None), DRAIN_WITHIN, 0.2, "the leftover messages")
    except AssertionError:
        message = f"{who}: the broker still holds messages after {DRAIN_WITHIN} s"
        warnings.warn(LeftoverWarning(message), stacklevel=1)


@pytest.fixture(scope="module", autouse=True)
def keys_before_this_module(request: pytest.FixtureRequest, db: Database) -> Iterator[int]:
    """The last key id before this module's tests (and module fixtures) ran: keys above it are theirs."""
    first = last_key_id(db)
    yield first
    # a module fixture that failed after submitting its job left it to no test's teardown
    settle(db, first, request.node.nodeid)


@pytest.fixture(autouse=True)
def cancel_leftover_jobs(
    request: pytest.FixtureRequest, db: Database, keys_before_this_module: int
) -> Iterator[None]:
    yield
    with_worker = "worker" in request.fixturenames
    broker = (lambda: zolve(request.getfixturevalue("app")).celery) if with_worker else None
    settle(db, keys_before_this_module, request.node.nodeid, broker)

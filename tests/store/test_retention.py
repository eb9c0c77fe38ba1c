"""Retention in bounded chunks (store.retention): any chunk size purges the same jobs, rows and batches, and
rows left behind by a purge interrupted between a job and its rows go on the next purge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import delete

from store import keys, retention
from store.db import Database
from store.models import Job
from tests.services.test_retention import make_job, stored
from tests.store.tally_truth import assert_counters_match


def test_small_chunks_purge_the_same_and_rows_go_after_their_job(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="owner").id
    old = [make_job(isolated_db, owner, days_ago=40 + n, boards=range(n * 10, n * 10 + 7)) for n in range(5)]
    recent = make_job(isolated_db, owner, days_ago=1, boards=[1000, 1001])
    before = datetime.now(UTC) - timedelta(days=30)

    report = retention.purge(isolated_db, before, pinned=(), chunk=2, rows_chunk=3)

    assert (report.jobs, report.rows, report.shards) == (5, 35, 5)
    assert stored(isolated_db, old) == 0 and stored(isolated_db, [recent]) == 2
    assert_counters_match(isolated_db)


def test_rows_of_a_job_already_gone_go_on_the_next_purge(isolated_db: Database) -> None:
    """A purge stopped after deleting a job and before its rows leaves them with no job: the next purge
    deletes them, whether or not anything else expired."""
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="owner").id
    gone = make_job(isolated_db, owner, days_ago=40, boards=range(50))
    kept = make_job(isolated_db, owner, days_ago=1, boards=[7])
    with isolated_db.session() as session:
        session.execute(delete(Job).where(Job.id == gone))
    assert stored(isolated_db, [gone]) == 50

    report = retention.purge(isolated_db, datetime.now(UTC) - timedelta(days=30), pinned=(), rows_chunk=20)

    assert (report.jobs, report.rows) == (0, 50)
    assert stored(isolated_db, [gone]) == 0 and stored(isolated_db, [kept]) == 1

"""The counters PostgreSQL keeps per transition (migration 0009, store.tallies) against COUNT(*) over the
rows, on a database no worker looks at: every transition by hand, bulk statements, a purge, a truncate."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text, update

from core.errors import JobError
from core.states import JobState
from services import retention
from store import dashboard, jobs, keys, metrics, shards, tallies
from store.db import Database
from store.models import Job, JobTallyDelta, Shard
from tests.store.tally_truth import assert_counters_match


@pytest.fixture
def owner(isolated_db: Database) -> int:
    with isolated_db.session() as session:
        return keys.create_key(session, name="owner").id


def new_job(db: Database, owner: int, kind: str = "dice") -> uuid.UUID:
    with db.session() as session:
        job, _ = jobs.create_job(
            session, owner_id=owner, kind=kind, params={"seed": str(uuid.uuid4())}, time_limit=60
        )
    return job.id


def run(db: Database, job_id: uuid.UUID, state: str, worker: str = "w") -> None:
    with db.session() as session:
        assert jobs.claim(session, job_id, worker, 30) is not None
    with db.session() as session:
        error = None if state == "succeeded" else JobError("E", "no")
        assert jobs.finish(session, job_id, worker, state=state, result={"ok": 1}, error=error)


def test_the_run_time_buckets_are_the_metrics_buckets(isolated_db: Database) -> None:
    """zolve_run_bucket (the trigger's) puts a run time where `le` puts it: bound i holds run times up to
    and including it; -1 is no run time."""
    probes = [None, 0, 0.05]
    for bound in metrics.RUN_SECONDS_BUCKETS:
        probes += [bound, bound + 0.001]
    with isolated_db.session() as session:
        got = [session.scalar(text("SELECT zolve_run_bucket(CAST(:s AS numeric))"), {"s": s}) for s in probes]
    expected = [-1] + [sum(bound < s for bound in metrics.RUN_SECONDS_BUCKETS) for s in probes[1:]]
    assert got == expected


def test_the_counters_follow_every_transition(isolated_db: Database, owner: int) -> None:
    db = isolated_db
    assert_counters_match(db)
    ok, failed, mastermind = new_job(db, owner), new_job(db, owner), new_job(db, owner, "mastermind.guess")
    run(db, ok, "succeeded")
    run(db, failed, "failed")
    assert_counters_match(db)

    # cancels: a queued job at once, a running one through cancelling
    queued, running = new_job(db, owner), new_job(db, owner)
    with db.session() as session:
        jobs.claim(session, running, "w", 30)
        jobs.request_cancel(session, session.get(Job, queued))
        jobs.request_cancel(session, session.get(Job, running))
    assert_counters_match(db)
    with db.session() as session:
        assert jobs.finish(session, running, "w", state="cancelled", error=JobError("Cancelled", ""))

    # a worker lost: the sweeper requeues, a second worker finishes
    with db.session() as session:
        jobs.claim(session, mastermind, "w1", 30)
        session.execute(
            update(Job).where(Job.id == mastermind).values(lease_expires_at=func.now() - timedelta(seconds=1))
        )
    with db.session() as session:
        jobs.sweep(session, max_attempts=3, requeue_after=None)
    assert_counters_match(db)
    run(db, mastermind, "succeeded", "w2")

    # an operator's retry: failed goes back to queued, with no run time
    with db.session() as session:
        dashboard.retry_job(session, failed, owner)
    assert_counters_match(db)
    run(db, failed, "succeeded")
    assert_counters_match(db)


def test_the_counters_follow_shards_and_the_rows_they_store(isolated_db: Database, owner: int) -> None:
    db = isolated_db
    job = new_job(db, owner, "planetx.enumerate")
    with db.session() as session:
        jobs.claim(session, job, "planner", 30)
        ids = shards.create_shards(session, job, "planner", ["a", "b", "c"])
    assert_counters_match(db)
    with db.session() as session:
        shards.claim_shard(session, ids[0], "w", 30)
        shards.complete_shard(session, ids[0], "w", [1, 2, 3], {"count": 3}, 0.1)
        shards.claim_shard(session, ids[1], "w", 30)
        new = shards.split_shard(session, ids[1], "w", ["b1", "b2"])
    assert_counters_match(db)
    for shard_id, rows in zip([ids[2], *new], ([4], [5, 6], [7]), strict=True):
        with db.session() as session:
            shards.claim_shard(session, shard_id, "w", 30)
            shards.complete_shard(session, shard_id, "w", rows, {"count": len(rows)}, 0.1)
    with db.session() as session:
        assert shards.finish_sharded_job(session, job, {"count": 7})
    figures = assert_counters_match(db)
    assert figures.rows_written == 7
    # a cache hit is a succeeded job inserted whole, with its run time
    with db.session() as session:
        source = session.get(Job, job)
        assert jobs.create_cached_job(
            session, owner_id=owner, kind=source.kind, params=source.params, time_limit=60
        )
    assert_counters_match(db)


def test_bulk_statements_a_purge_and_a_truncate(isolated_db: Database, owner: int) -> None:
    db = isolated_db
    done = [new_job(db, owner, kind) for kind in ("dice", "taiji.solve", "dice", "mastermind.guess")]
    for job_id in done:
        run(db, job_id, "succeeded")
    waiting = [new_job(db, owner) for _ in range(3)]
    with db.session() as session:
        jobs.forget_published(session)  # one UPDATE of every queued job: no state changes
        # one UPDATE moving finished jobs between run-time buckets (and to +Inf)
        session.execute(
            update(Job).where(Job.id.in_(done[:2])).values(finished_at=Job.finished_at + timedelta(days=40))
        )
        session.execute(
            update(Job).where(Job.id.in_(done[2:])).values(finished_at=Job.finished_at - timedelta(days=40))
        )
    assert_counters_match(db)
    with db.session() as session:
        session.execute(update(Job).where(Job.id.in_(waiting)).values(state=JobState.CANCELLED))
    assert_counters_match(db)

    report = retention.purge(db, timedelta(days=30))
    assert report.jobs >= 2
    assert_counters_match(db)

    with db.session() as session:
        session.execute(text("TRUNCATE jobs CASCADE"))
    figures = assert_counters_match(db)
    assert figures.jobs == [] and figures.shards == []


def test_transitions_never_wait_for_each_other(isolated_db: Database, owner: int) -> None:
    """Two transactions move jobs of one kind from and to the same states at once: the counters take no
    row lock a concurrent transition needs (each statement appends its own delta row)."""
    db = isolated_db
    first, second = new_job(db, owner), new_job(db, owner)
    with db.session() as holding:
        assert jobs.claim(holding, first, "w1", 30) is not None  # uncommitted while the other runs
        with db.session() as other:
            other.execute(text("SET LOCAL lock_timeout = '2s'"))
            assert jobs.claim(other, second, "w2", 30) is not None
            assert tallies.compact(other)
    assert_counters_match(db)


def test_one_compactor_at_a_time_and_deltas_are_folded(isolated_db: Database, owner: int) -> None:
    db = isolated_db
    for _ in range(3):
        new_job(db, owner)
    with db.session() as first:
        assert tallies.compact(first)
        with db.session() as second:
            assert not tallies.compact(second), "the other compactor holds the lock"
    with db.session() as session:
        assert session.scalar(select(func.count()).select_from(JobTallyDelta)) == 0
        assert [(c.kind, c.state, c.jobs) for c in tallies.job_counts(session)] == [("dice", "queued", 3)]
    assert_counters_match(db)


def test_a_transition_rolled_back_leaves_no_count(isolated_db: Database, owner: int) -> None:
    """The counters are part of the transition's transaction: a rollback takes its delta with it."""

    class Abort(Exception):
        pass

    job = new_job(isolated_db, owner)
    with pytest.raises(Abort), isolated_db.session() as session:
        assert jobs.claim(session, job, "w", 30) is not None
        raise Abort
    with isolated_db.session() as session:
        assert session.get(Job, job).state == JobState.QUEUED
    assert_counters_match(isolated_db)


def test_metrics_page_reads_the_counters(isolated_db: Database, owner: int) -> None:
    run(isolated_db, new_job(isolated_db, owner), "succeeded")
    with isolated_db.session() as session:
        session.add(Shard(job_id=new_job(isolated_db, owner), key="k", state="succeeded", row_count=5))
    with isolated_db.session() as session:
        figures = metrics.figures(session)
    assert ("dice", "succeeded", 1) in figures.jobs and figures.rows_written == 5
    assert figures.run_seconds[1] == 1

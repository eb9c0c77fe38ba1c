"""The dashboard's store: job events recorded by the transitions themselves, worker heartbeats, the
overview's aggregates and the operators' actions, driven by hand on a database no worker looks at."""

from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from core.errors import EVENT_MESSAGE_CHARS, JobError
from store import dashboard, events, heartbeats, jobs, keys, rows, shards
from store.db import Database
from store.models import Job, JobEvent, Shard, Worker
from tests.support import new_job


def history(db: Database, job_id) -> list[tuple]:
    with db.session() as session:
        return [(e.event, e.attempt, e.actor_key_id) for e in events.history(session, job_id)]


def expire_job_lease(db: Database, job_id) -> None:
    with db.session() as session:
        session.execute(
            update(Job).where(Job.id == job_id).values(lease_expires_at=func.now() - timedelta(seconds=1))
        )


@pytest.fixture
def owner(isolated_db: Database) -> int:
    with isolated_db.session() as session:
        return keys.create_key(session, name="owner").id


def test_a_job_records_each_transition_once(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        assert jobs.claim(session, job.id, "w1", 30) is not None
        assert jobs.claim(session, job.id, "w2", 30) is None, "a duplicate claim records nothing"
    expire_job_lease(isolated_db, job.id)
    with isolated_db.session() as session:
        jobs.sweep(session, max_attempts=3, requeue_after=None)
    with isolated_db.session() as session:
        jobs.claim(session, job.id, "w2", 30)
    with isolated_db.session() as session:
        error = JobError("ValueError", "x" * 2000, "secret frames")
        assert jobs.finish(session, job.id, "w2", state="failed", error=error)
        assert not jobs.finish(session, job.id, "w2", state="failed", error=error)
    assert history(isolated_db, job.id) == [
        ("created", None, owner),
        ("running", 1, None),
        ("requeued", 1, None),
        ("running", 2, None),
        ("failed", 2, None),
    ]
    with isolated_db.session() as session:
        failed = events.history(session, job.id)[-1].detail
        requeued = events.history(session, job.id)[2].detail
    assert failed == {"type": "ValueError", "message": "x" * EVENT_MESSAGE_CHARS}
    assert requeued == {"reason": "lease expired", "worker": "w1"}


def test_cancels_record_who_asked(isolated_db: Database, owner: int) -> None:
    queued, running = new_job(isolated_db, owner), new_job(isolated_db, owner)
    with isolated_db.session() as session:
        jobs.claim(session, running.id, "w", 30)
        jobs.request_cancel(session, session.get(Job, queued.id), actor_key_id=owner)
        jobs.request_cancel(session, session.get(Job, running.id), actor_key_id=owner)
        jobs.request_cancel(session, session.get(Job, running.id), actor_key_id=owner)
    with isolated_db.session() as session:
        jobs.finish(session, running.id, "w", state="cancelled", error=JobError("Cancelled", "c"))
    assert history(isolated_db, queued.id) == [("created", None, owner), ("cancelled", None, owner)]
    assert [e for e, _, _ in history(isolated_db, running.id)] == [
        "created",
        "running",
        "cancel_requested",
        "cancelled",
    ]


@pytest.fixture
def planned(isolated_db: Database, owner: int) -> tuple[Job, list[int]]:
    job = new_job(isolated_db, owner, "planetx.enumerate", {"mode": "standard"})
    with isolated_db.session() as session:
        jobs.claim(session, job.id, "planner", 30)
        ids = shards.create_shards(session, job.id, "planner", ["AA", "AG", "CE"])
    return job, ids


def test_sharded_transitions_are_recorded(isolated_db: Database, planned) -> None:
    job, ids = planned
    for shard_id in ids:
        with isolated_db.session() as session:
            shards.claim_shard(session, shard_id, "w", 30)
            shards.complete_shard(session, shard_id, "w", [shard_id], {"count": 1}, 0.1)
    with isolated_db.session() as session:
        assert shards.finish_sharded_job(session, job.id, {"count": 3})
    assert [e for e, _, _ in history(isolated_db, job.id)] == ["created", "running", "planned", "succeeded"]


def test_an_expired_shard_lease_is_recorded_as_requeued(isolated_db: Database, planned) -> None:
    job, ids = planned
    with isolated_db.session() as session:
        shards.claim_shard(session, ids[0], "w1", 30)
        session.execute(
            update(Shard).where(Shard.id == ids[0]).values(lease_expires_at=func.now() - timedelta(seconds=1))
        )
    with isolated_db.session() as session:
        shards.sweep_shards(session, max_attempts=3, requeue_after=None, stale_after=60)
    with isolated_db.session() as session:
        last = events.history(session, job.id)[-1]
    assert (last.event, last.attempt, last.detail) == (
        "shard_requeued",
        1,
        {"shard": "AA", "reason": "lease expired", "worker": "w1"},
    )


def test_requeue_takes_a_shard_from_its_worker_which_then_stores_nothing(isolated_db, planned, owner) -> None:
    job, ids = planned
    with isolated_db.session() as session:
        shards.claim_shard(session, ids[0], "stuck", 30)
    with isolated_db.session() as session:
        shard = dashboard.requeue_shard(session, job.id, ids[0], owner)
        assert (shard.state, shard.lease_owner) == ("queued", None)
    with isolated_db.session() as session:
        assert shards.heartbeat_shard(session, ids[0], "stuck", 30) is None, "the old worker lost its lease"
        assert not shards.complete_shard(session, ids[0], "stuck", [1, 2], {"count": 2}, 0.1).stored
        assert shards.claim_shard(session, ids[0], "fresh", 30).attempts == 2
        assert shards.complete_shard(session, ids[0], "fresh", [1, 2], {"count": 2}, 0.1).stored
        assert len(rows.keys_stored(session, job.id)) == 2
    assert history(isolated_db, job.id)[-1] == ("shard_requeued", 1, owner)
    with isolated_db.session() as session, pytest.raises(dashboard.ActionRefused):
        dashboard.requeue_shard(session, job.id, ids[0], owner)


def test_retry_starts_a_failed_sharded_job_over(isolated_db: Database, planned, owner: int) -> None:
    job, ids = planned
    with isolated_db.session() as session:
        shards.claim_shard(session, ids[0], "w", 30)
        shards.complete_shard(session, ids[0], "w", [7, 8], {"count": 2}, 0.1)
        shards.claim_shard(session, ids[1], "w", 30)
        shards.claim_shard(session, ids[2], "w2", 30)
        shards.fail_shard(session, ids[1], "w", JobError("ValueError", "bad"))
    with isolated_db.session() as session, pytest.raises(dashboard.ActionRefused, match="still stopping"):
        dashboard.retry_job(session, job.id, owner)
    with isolated_db.session() as session:
        shards.stop_shard(session, ids[2], "w2")
    with isolated_db.session() as session:
        retried = dashboard.retry_job(session, job.id, owner)
    assert (retried.state, retried.attempts, retried.error, retried.shards_total, retried.rows_done) == (
        "queued",
        0,
        None,
        0,
        0,
    )
    with isolated_db.session() as session:
        assert session.scalar(select(func.count()).where(Shard.job_id == job.id)) == 0
        # its rows are the planner's to delete, in chunks, not the retry's (tests/api/test_retry_rows.py)
        assert len(rows.keys_stored(session, job.id)) == 2
    assert rows.delete_rows(isolated_db, job.id, lambda session: True, chunk=1) == (2, True)
    with isolated_db.session() as session:
        assert len(rows.keys_stored(session, job.id)) == 0
        assert jobs.claim(session, job.id, "planner", 30) is not None
        assert shards.create_shards(session, job.id, "planner", ["AA", "AG", "CE"])
    recorded = history(isolated_db, job.id)
    assert recorded[-3:] == [("retried", None, owner), ("running", 1, None), ("planned", None, None)]
    with isolated_db.session() as session, pytest.raises(dashboard.ActionRefused, match="only a failed"):
        dashboard.retry_job(session, job.id, owner)


def test_heartbeats_list_live_processes_with_what_they_run(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [101, 102], "boot1", "celery@host")
        heartbeats.beat(session, "gone", [9], "boot2", "celery@gone")
        session.execute(
            update(Worker)
            .where(Worker.hostname == "gone")
            .values(heartbeat_at=func.now() - timedelta(minutes=5))
        )
        jobs.claim(session, job.id, "host:102:boot1", 30)
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [101, 102], "boot1", "celery@host")
        alive = dashboard.workers_alive(session, within=60)
    assert [(w.name, w.node) for w in alive] == [
        ("host:101:boot1", "celery@host"),
        ("host:102:boot1", "celery@host"),
    ]
    assert alive[0].running == [] and alive[1].running == [dashboard.Lease(job.id, "dice", None)]
    assert alive[1].heartbeat_at > alive[1].started_at, "a beat keeps the start time"


def test_overview_counts_queues_and_the_last_hour(isolated_db: Database, planned, owner: int) -> None:
    job, ids = planned
    done, failed = new_job(isolated_db, owner), new_job(isolated_db, owner)
    new_job(isolated_db, owner)  # queued
    with isolated_db.session() as session:
        shards.claim_shard(session, ids[0], "w", 30)
        shards.complete_shard(session, ids[0], "w", [1, 2, 3], {"count": 3}, 0.1)
        for row, state in ((done, "succeeded"), (failed, "failed")):
            jobs.claim(session, row.id, "w", 30)
            jobs.finish(session, row.id, "w", state=state)
    with isolated_db.session() as session:
        summary = dashboard.overview(session, alive_within=15)
    assert summary.states == {"queued": 1, "running": 1, "succeeded": 1, "failed": 1}
    assert summary.queues == [
        dashboard.QueueDepth("dice", 1, 0),
        dashboard.QueueDepth("planetx.enumerate", 0, 2),
    ]
    assert summary.failure_rate_hour == summary.failure_rate_all == 0.5
    assert len(summary.minutes) == dashboard.CHART_MINUTES
    assert sum(m.jobs for m in summary.minutes) == 2 and sum(m.boards for m in summary.minutes) == 3
    # each job in the bar of the minute it finished in (a minute may have begun since: not the last bar)
    with isolated_db.session() as session:
        finished = [
            session.get(Job, row.id).finished_at.replace(second=0, microsecond=0) for row in (done, failed)
        ]
    assert {m.start: m.jobs for m in summary.minutes if m.jobs} == Counter(finished)
    assert summary.minutes[-1].start >= max(finished), "the current minute is the last bar"


def test_events_go_with_their_job(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        session.delete(session.get(Job, job.id))
    with isolated_db.session() as session:
        assert session.scalar(select(func.count()).select_from(JobEvent)) == 0


def test_a_recycled_pool_process_leaves_the_list(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [101, 102], "a", "zolve-a@host")
        heartbeats.beat(session, "host", [201], "b", "zolve-b@host")
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [101, 103], "a", "zolve-a@host")
        names = [w.name for w in dashboard.workers_alive(session, within=60)]
    assert names == ["host:101:a", "host:103:a", "host:201:b"]


def test_retry_gives_a_job_its_finalize_attempts_back(isolated_db: Database, planned, owner: int) -> None:
    """A job failed by finalizes that kept dying would otherwise give up at once on its next finalize."""
    job, _ = planned
    with isolated_db.session() as session:
        session.execute(
            update(Job)
            .where(Job.id == job.id)
            .values(state="failed", finalize_attempts=3, finished_at=func.now())
        )
    with isolated_db.session() as session:
        retried = dashboard.retry_job(session, job.id, owner)
    assert (retried.finalize_attempts, retried.finalize_enqueued_at) == (0, None)

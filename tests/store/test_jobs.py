"""Job state transitions against a real PostgreSQL, driven by hand (no worker looks at this database)."""

from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from store import dispatch, jobs, keys
from store.db import Database
from store.models import Job, WebhookDelivery

PARAMS = {"dice": 3, "faces": 6, "max_face": None, "beats": "cycle"}


@pytest.fixture
def owner(isolated_db: Database) -> int:
    with isolated_db.session() as session:
        return keys.create_key(session, name="owner").id


def new_job(db: Database, owner: int, **kwargs) -> Job:
    with db.session() as session:
        job, created = jobs.create_job(
            session, owner_id=owner, kind="dice", params=PARAMS, time_limit=60, **kwargs
        )
    assert created
    return job


def expire_lease(db: Database, job_id) -> None:
    with db.session() as session:
        session.execute(
            update(Job).where(Job.id == job_id).values(lease_expires_at=func.now() - timedelta(seconds=1))
        )


def load(db: Database, job_id) -> Job:
    with db.session() as session:
        return session.get(Job, job_id)


def test_claim_is_compare_and_set(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        first = jobs.claim(session, job.id, "w1", 30)
    with isolated_db.session() as session:
        second = jobs.claim(session, job.id, "w2", 30)
    assert first is not None and first.attempts == 1 and first.lease_owner == "w1"
    assert second is None, "a duplicate delivery must not take a live lease"


def test_expired_lease_can_be_reclaimed_and_the_old_worker_cannot_finish(
    isolated_db: Database, owner: int
) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        jobs.claim(session, job.id, "dead", 30)
    expire_lease(isolated_db, job.id)
    with isolated_db.session() as session:
        again = jobs.claim(session, job.id, "alive", 30)
    assert again is not None and again.attempts == 2
    with isolated_db.session() as session:
        assert not jobs.finish(session, job.id, "dead", state="succeeded", result={"late": True})
        assert jobs.heartbeat(session, job.id, "dead", 30, None) is None
    with isolated_db.session() as session:
        assert jobs.finish(session, job.id, "alive", state="succeeded", result={"ok": True})
    final = load(isolated_db, job.id)
    assert (final.state, final.result, final.lease_owner) == ("succeeded", {"ok": True}, None)


def test_a_redelivered_job_without_attempts_left_is_not_claimed_but_failed_by_the_sweep(
    isolated_db: Database, owner: int
) -> None:
    job = new_job(isolated_db, owner)
    for attempt in (1, 2):
        expire_lease(isolated_db, job.id)
        with isolated_db.session() as session:
            assert jobs.claim(session, job.id, f"w{attempt}", 30, max_attempts=2).attempts == attempt
    expire_lease(isolated_db, job.id)
    with isolated_db.session() as session:
        assert jobs.claim(session, job.id, "w3", 30, max_attempts=2) is None
    with isolated_db.session() as session:
        report = jobs.sweep(session, max_attempts=2, requeue_after=None)
    assert report.failed == [job.id]
    assert (load(isolated_db, job.id).state, load(isolated_db, job.id).attempts) == ("failed", 2)


def test_finished_job_is_never_claimed_again(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        jobs.claim(session, job.id, "w", 30)
        jobs.finish(session, job.id, "w", state="succeeded", result={})
    with isolated_db.session() as session:
        assert jobs.claim(session, job.id, "w2", 30) is None


def test_cancel_queued_job_means_it_never_starts(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        cancelled = jobs.request_cancel(session, session.get(Job, job.id))
    assert cancelled.state == "cancelled" and cancelled.finished_at is not None
    with isolated_db.session() as session:
        assert jobs.claim(session, job.id, "w", 30) is None


def test_cancel_running_job_is_seen_by_the_heartbeat(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        jobs.claim(session, job.id, "w", 30)
        assert jobs.heartbeat(session, job.id, "w", 30, {"step": 1}) is False
    with isolated_db.session() as session:
        assert jobs.request_cancel(session, session.get(Job, job.id)).state == "cancelling"
    with isolated_db.session() as session:
        assert jobs.heartbeat(session, job.id, "w", 30, {"step": 2}) is True
        assert jobs.finish(session, job.id, "w", state="cancelled")
    final = load(isolated_db, job.id)
    assert (final.state, final.progress) == ("cancelled", {"step": 2})


def test_sweep_requeues_expired_leases_then_fails_after_max_attempts(
    isolated_db: Database, owner: int
) -> None:
    job = new_job(isolated_db, owner)
    for attempt in range(1, 4):
        with isolated_db.session() as session:
            assert jobs.claim(session, job.id, f"w{attempt}", 30).attempts == attempt
        expire_lease(isolated_db, job.id)
        with isolated_db.session() as session:
            report = jobs.sweep(session, max_attempts=3, requeue_after=60)
        if attempt < 3:
            assert report.to_enqueue == [job.id] and load(isolated_db, job.id).state == "queued"
    assert report.failed == [job.id]
    final = load(isolated_db, job.id)
    assert final.state == "failed" and "3 attempts" in final.error["message"]


def test_sweep_resends_lost_jobs_only_and_leaves_never_sent_ones_to_dispatch(
    isolated_db: Database, owner: int
) -> None:
    sent = new_job(isolated_db, owner)
    lost = new_job(isolated_db, owner)
    never = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        session.execute(update(Job).where(Job.id == sent.id).values(enqueued_at=func.now()))
        session.execute(
            update(Job).where(Job.id == lost.id).values(enqueued_at=func.now() - timedelta(seconds=120))
        )
    with isolated_db.session() as session:
        assert jobs.sweep(session, max_attempts=3, requeue_after=None).to_enqueue == [], "not judged"
    with isolated_db.session() as session:
        report = jobs.sweep(session, max_attempts=3, requeue_after=60)
        assert report.to_enqueue == [lost.id] and report.resent == 1
    with isolated_db.session() as session:
        # sent again just now: the next sweep leaves it alone for another requeue_after
        assert jobs.sweep(session, max_attempts=3, requeue_after=60).to_enqueue == []
        # a job never sent (or refused by the broker) goes when its client's turn comes
        assert dispatch.release(session, window=10).jobs == [never.id]


def test_sweep_finishes_abandoned_cancellation(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        jobs.claim(session, job.id, "w", 30)
    with isolated_db.session() as session:
        jobs.request_cancel(session, session.get(Job, job.id))
    expire_lease(isolated_db, job.id)
    with isolated_db.session() as session:
        assert jobs.sweep(session, max_attempts=3, requeue_after=60).cancelled == [job.id]
    assert load(isolated_db, job.id).state == "cancelled"


def test_idempotency_key_replays_same_request_and_rejects_another(isolated_db: Database, owner: int) -> None:
    job = new_job(isolated_db, owner, idempotency_key="k1")
    with isolated_db.session() as session:
        replay, created = jobs.create_job(
            session, owner_id=owner, kind="dice", params=PARAMS, time_limit=60, idempotency_key="k1"
        )
    assert not created and replay.id == job.id
    with isolated_db.session() as session, pytest.raises(jobs.IdempotencyConflict):
        jobs.create_job(
            session,
            owner_id=owner,
            kind="dice",
            params={**PARAMS, "faces": 5},
            time_limit=60,
            idempotency_key="k1",
        )


def test_keyset_pages_cover_every_job_once(isolated_db: Database, owner: int) -> None:
    created = [new_job(isolated_db, owner).id for _ in range(7)]
    seen, cursor = [], None
    while True:
        with isolated_db.session() as session:
            page = jobs.list_jobs(session, owner_id=owner, limit=3, cursor=cursor)
        seen += [job.id for job in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == list(reversed(created))


def test_api_keys_are_stored_hashed(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        new = keys.create_key(session, name="x")
    with isolated_db.session() as session:
        row = keys.authenticate(session, new.key)
        assert row is not None and row.key_hash != new.key and new.key not in row.key_hash
        assert keys.authenticate(session, new.key + "x") is None


def test_a_created_job_is_the_whole_row_and_in_the_session(isolated_db: Database, owner: int) -> None:
    """create_job builds its Job from the INSERT's returned row (no read after it): the server's defaults
    are on it, and a change to it in the same transaction is stored, as with an ORM insert."""
    with isolated_db.session() as session:
        job, _ = jobs.create_job(session, owner_id=owner, kind="dice", params=PARAMS, time_limit=60)
        assert job.created_at is not None and job.state == "queued" and job.params == PARAMS
        job.time_limit = 42
    assert load(isolated_db, job.id).time_limit == 42


def _age(db: Database, job_id, seconds: float) -> None:
    with db.session() as session:
        later = Job.created_at - timedelta(seconds=seconds)
        session.execute(update(Job).where(Job.id == job_id).values(created_at=later))


def test_a_job_not_started_within_its_queue_timeout_ends_expired_without_running(
    isolated_db: Database, owner: int
) -> None:
    from core.events import EventName
    from store import events

    overdue = new_job(isolated_db, owner, queue_timeout=2.0, callback_url="https://example.com/hook")
    in_time = new_job(isolated_db, owner, queue_timeout=60.0)
    no_limit = new_job(isolated_db, owner)
    for job in (overdue, in_time, no_limit):
        _age(isolated_db, job.id, 3)
    with isolated_db.session() as session:
        assert jobs.claim(session, overdue.id, "w", 30) is None, "its message, taken late, runs nothing"
    with isolated_db.session() as session:
        report = jobs.sweep(session, max_attempts=3, requeue_after=None)
    assert report.expired == [overdue.id]
    ended = load(isolated_db, overdue.id)
    assert ended.state == "expired" and ended.started_at is None and ended.finished_at is not None
    assert ended.error["type"] == "QueueTimeout"
    with isolated_db.session() as session:
        names = [event.event for event in events.history(session, overdue.id)]
    assert names == [EventName.CREATED, EventName.EXPIRED]
    with isolated_db.session() as session:
        delivery = session.scalars(select(WebhookDelivery).where(WebhookDelivery.job_id == overdue.id)).one()
    assert delivery.url == "https://example.com/hook", "its webhook goes as at any other end"
    assert load(isolated_db, in_time.id).state == "queued"
    assert load(isolated_db, no_limit.id).state == "queued"


def test_a_job_that_started_is_not_judged_by_its_queue_timeout_again(
    isolated_db: Database, owner: int
) -> None:
    job = new_job(isolated_db, owner, queue_timeout=2.0)
    with isolated_db.session() as session:
        assert jobs.claim(session, job.id, "dead", 30) is not None
    _age(isolated_db, job.id, 3)
    expire_lease(isolated_db, job.id)
    with isolated_db.session() as session:
        report = jobs.sweep(session, max_attempts=3, requeue_after=None)
    assert report.expired == [] and report.to_enqueue == [job.id], "its worker died: queued again"
    with isolated_db.session() as session:
        assert jobs.claim(session, job.id, "alive", 30) is not None


def test_a_repeated_idempotency_key_with_another_priority_is_a_conflict(
    isolated_db: Database, owner: int
) -> None:
    new_job(isolated_db, owner, idempotency_key="k", priority=5)
    with isolated_db.session() as session, pytest.raises(jobs.IdempotencyConflict):
        jobs.create_job(
            session,
            owner_id=owner,
            kind="dice",
            params=PARAMS,
            time_limit=60,
            idempotency_key="k",
            priority=6,
        )

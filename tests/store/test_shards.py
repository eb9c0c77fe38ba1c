"""Shard transitions against a real PostgreSQL, driven by hand (no worker looks at this database)."""

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.exc import OperationalError

from store import dispatch, jobs, keys, rows, shards
from store.db import Database
from store.models import Job, JobEvent, Shard


def _sharded_job(db: Database, owner: int, shard_keys: list[str]) -> tuple[Job, list[int]]:
    """A running planetx.enumerate job of `owner` with these held shards."""
    with db.session() as session:
        job, _ = jobs.create_job(
            session, owner_id=owner, kind="planetx.enumerate", params={"mode": "standard"}, time_limit=60
        )
    with db.session() as session:
        jobs.claim(session, job.id, "planner", 30)
        ids = shards.create_shards(session, job.id, "planner", shard_keys)
    return job, ids


@pytest.fixture
def planned(isolated_db: Database) -> tuple[Database, Job, list[int]]:
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    job, ids = _sharded_job(isolated_db, owner, ["AA", "AG", "CE"])
    return isolated_db, job, ids


def test_rows_and_completion_commit_together_and_the_last_shard_finalizes(planned) -> None:
    db, job, ids = planned
    for n, shard_id in enumerate(ids):
        with db.session() as session:
            assert shards.claim_shard(session, shard_id, "w", 30) is not None
        with db.session() as session:
            done = shards.complete_shard(session, shard_id, "w", [n * 10 + 1, n * 10 + 2], {"count": 2}, 0.1)
        assert done.stored and done.last == (n == len(ids) - 1)
    with db.session() as session:
        assert len(rows.keys_stored(session, job.id)) == 6
        assert shards.finish_sharded_job(session, job.id, {"count": 6})
        assert not shards.finish_sharded_job(session, job.id, {"count": 6}), "finalize is idempotent"


def test_a_succeeded_job_locked_for_its_merge_cannot_be_deleted_but_can_be_updated(planned) -> None:
    """store.shards.lock_succeeded, taken by the merge of a job's blocks after its success: a purge's
    delete of the job waits for the merge (else it could write blocks for a job that is gone)."""
    db, job, _ = planned
    with db.session() as session:
        assert not shards.lock_succeeded(session, job.id), "a running job is not merged"
    with db.session() as session:
        session.execute(update(Job).where(Job.id == job.id).values(state="succeeded"))
    with db.session() as merging:
        assert shards.lock_succeeded(merging, job.id)
        with db.session() as other:
            other.execute(text("SET LOCAL lock_timeout = '300ms'"))
            other.execute(update(Job).where(Job.id == job.id).values(finalize_attempts=7))
        with pytest.raises(OperationalError, match="lock timeout"), db.session() as other:
            other.execute(text("SET LOCAL lock_timeout = '300ms'"))
            other.execute(delete(Job).where(Job.id == job.id))
    with db.session() as session:
        assert session.get(Job, job.id).finalize_attempts == 7


def test_a_second_run_of_a_finished_shard_writes_nothing(planned) -> None:
    db, job, ids = planned
    with db.session() as session:
        shards.claim_shard(session, ids[0], "w1", 30)
        shards.complete_shard(session, ids[0], "w1", [1, 2, 3], {"count": 3}, 0.1)
    with db.session() as session:
        assert shards.claim_shard(session, ids[0], "w2", 30) is None
        assert not shards.complete_shard(session, ids[0], "w2", [1, 2, 3], {"count": 3}, 0.1).stored
    with db.session() as session:
        assert len(rows.keys_stored(session, job.id)) == 3


def test_expired_shard_lease_is_requeued_then_failed_after_max_attempts(planned) -> None:
    db, job, ids = planned
    for attempt in (1, 2):
        with db.session() as session:
            assert shards.claim_shard(session, ids[0], f"w{attempt}", 30).attempts == attempt
            session.execute(
                update(Shard)
                .where(Shard.id == ids[0])
                .values(lease_expires_at=func.now() - timedelta(seconds=1))
            )
        with db.session() as session:
            report = shards.sweep_shards(session, max_attempts=2, requeue_after=None, stale_after=60)
    with db.session() as session:
        assert session.get(Job, job.id).state == "failed"
        assert {s.state for s in session.scalars(select(Shard).where(Shard.job_id == job.id))} == {
            "failed",
            "cancelled",
        }
    assert report.to_enqueue == []


def test_sweep_resends_only_lost_shards_and_dispatch_releases_never_sent_ones(planned) -> None:
    db, job, ids = planned
    with db.session() as session:
        session.execute(update(Shard).where(Shard.id == ids[2]).values(enqueued_at=func.now()))
        session.execute(
            update(Shard).where(Shard.id == ids[1]).values(enqueued_at=func.now() - timedelta(hours=1))
        )
    with db.session() as session:
        sweep = shards.sweep_shards(session, max_attempts=3, requeue_after=None, stale_after=60)
        assert sweep.to_enqueue == [], "not judged"
    with db.session() as session:
        assert shards.sweep_shards(session, max_attempts=3, requeue_after=60, stale_after=60).to_enqueue == [
            ids[1]
        ]
    with db.session() as session:
        assert dispatch.release(session, window=10).shards == [ids[0]]


def test_cancel_cancels_queued_shards_and_settles_when_running_ones_stop(planned) -> None:
    db, job, ids = planned
    with db.session() as session:
        shards.claim_shard(session, ids[0], "w", 30)
    with db.session() as session:
        assert jobs.request_cancel(session, session.get(Job, job.id)).state == "cancelling"
        assert shards.heartbeat_shard(session, ids[0], "w", 30) is True
    with db.session() as session:
        shards.stop_shard(session, ids[0], "w")
    with db.session() as session:
        assert session.get(Job, job.id).state == "cancelled"
        assert {s.state for s in session.scalars(select(Shard).where(Shard.job_id == job.id))} == {
            "cancelled"
        }


def test_a_cancel_is_settled_by_the_end_of_the_last_running_shard_however_it_ends(planned) -> None:
    """Shards that finish, split or hand on work after the cancel was asked: nothing they add starts, and
    the last one's end cancels the job (not the sweeper, a sweep interval later)."""
    db, job, ids = planned
    for shard_id in ids:
        with db.session() as session:
            assert shards.claim_shard(session, shard_id, "w", 30) is not None
    with db.session() as session:
        assert jobs.request_cancel(session, session.get(Job, job.id)).state == "cancelling"
    with db.session() as session:
        done = shards.complete_shard(
            session, ids[0], "w", [1], {"count": 1}, 0.1, rest=["AAx"], chain_lease=30
        )
        assert done.stored and not done.last and done.next is None
    with db.session() as session:
        assert shards.split_shard(session, ids[1], "w", ["AGa", "AGb"]) == []
    with db.session() as session:
        assert session.get(Job, job.id).state == "cancelling", "a shard still runs"
        done = shards.complete_shard(session, ids[2], "w", [2], {"count": 1}, 0.1)
        assert done.stored and not done.last
    with db.session() as session:
        assert session.get(Job, job.id).state == "cancelled"
        states = {s.key: s.state for s in session.scalars(select(Shard).where(Shard.job_id == job.id))}
    assert states == {
        "AA": "succeeded",
        "AG": "split",
        "CE": "succeeded",
        "AAx": "cancelled",
        "AGa": "cancelled",
        "AGb": "cancelled",
    }


def test_a_shard_that_hands_on_the_rest_of_its_work_stores_its_part_and_adds_held_shards(planned) -> None:
    db, job, ids = planned
    for shard_id in ids:
        with db.session() as session:
            shards.claim_shard(session, shard_id, "w", 30)
        with db.session() as session:
            rest = ("CE+1", "CE+2") if shard_id == ids[-1] else ()
            done = shards.complete_shard(session, shard_id, "w", [shard_id], {"part": 1}, 0.5, rest)
        assert not done.last, "the handed-on work is still to do"
    with db.session() as session:
        progress = session.get(Job, job.id)
        assert (progress.shards_done, progress.shards_total) == (3, 5)
        handed_on = list(session.scalars(select(Shard).where(Shard.job_id == job.id, Shard.key.like("CE+%"))))
        assert [(s.state, s.enqueued_at) for s in handed_on] == [("queued", None)] * 2
        assert dispatch.release(session, window=10).shards == [s.id for s in handed_on]
    for shard, left in zip(handed_on, (58.5, 58.0), strict=True):
        with db.session() as session:
            claimed = shards.claim_shard(session, shard.id, "w", 30)
            assert claimed.time_limit == left, "a job's time_limit counts every shard's solve time"
        with db.session() as session:
            done = shards.complete_shard(session, shard.id, "w", [], {"part": 2}, 0.5)
    assert done.last


def test_a_chain_takes_the_jobs_held_shards_in_order_and_never_a_sent_one(planned) -> None:
    db, job, ids = planned
    with db.session() as session:  # the middle one was released: its message is on its way
        session.execute(update(Shard).where(Shard.id == ids[1]).values(enqueued_at=func.now()))
    with db.session() as session:
        first = shards.claim_next_held(session, job.id, "w", 30)
        second = shards.claim_next_held(session, job.id, "w", 30)
        assert shards.claim_next_held(session, job.id, "w", 30) is None
    assert (first.id, first.key, first.attempts) == (ids[0], "AA", 1)
    assert (second.id, second.key) == (ids[2], "CE")
    assert first.kind == "planetx.enumerate" and first.time_limit == 60
    with db.session() as session:
        taken = session.execute(
            select(Shard.state, Shard.lease_owner, Shard.enqueued_at).where(Shard.id == ids[2])
        )
        state, owner, enqueued_at = taken.one()
        assert (state, owner) == ("running", "w") and enqueued_at is not None, "a release must not send it"
        assert not dispatch.release(session, window=10, owners=[job.owner_id]).shards


def _sent_shard(db: Database, owner: int) -> int:
    """A running sharded job of `owner` with one shard sent (its message waits in the broker)."""
    _, (shard_id,) = _sharded_job(db, owner, ["AA"])
    with db.session() as session:
        session.execute(update(Shard).where(Shard.id == shard_id).values(enqueued_at=func.now()))
    return shard_id


def new_sent_job(db: Database, owner: int) -> uuid.UUID:
    """A queued job of `owner` whose message was sent (and not taken yet)."""
    with db.session() as session:
        job, _ = jobs.create_job(session, owner_id=owner, kind="dice", params={"dice": 3}, time_limit=60)
        job.enqueued_at = func.now()
    return job.id


def test_a_chain_ends_while_another_clients_shard_waits_in_the_broker(planned) -> None:
    db, job, ids = planned
    _sent_shard(db, job.owner_id)
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30).id == ids[0], "its own client's: goes on"
    with db.session() as session:
        other = keys.create_key(session, name="other").id
    waiting = _sent_shard(db, other)
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30) is None, "the other client's turn"
    with db.session() as session:
        assert shards.claim_shard(session, waiting, "w2", 30) is not None
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30).id == ids[1], "taken: the chain goes on"


def test_a_chain_ends_while_a_shard_of_a_higher_priority_job_of_its_client_waits(planned) -> None:
    db, job, ids = planned
    lower = _sent_shard(db, job.owner_id)
    with db.session() as session:
        session.execute(update(Job).where(Job.id == job.id).values(priority=10))
        assert shards.claim_next_held(session, job.id, "w", 30).id == ids[0], "a lower one's: goes on"
    higher = _sent_shard(db, job.owner_id)
    with db.session() as session:
        session.execute(
            update(Job)
            .where(Job.id == select(Shard.job_id).where(Shard.id == higher).scalar_subquery())
            .values(priority=11)
        )
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30) is None, "the higher priority's turn"
    with db.session() as session:
        assert shards.claim_shard(session, higher, "w2", 30) is not None
        assert shards.claim_shard(session, lower, "w3", 30) is not None


def test_a_chain_ends_while_interactive_work_was_sent_and_not_taken(planned) -> None:
    """A job sent and not claimed, a retried shard sent, a first finalize sent: the process that would
    chain takes that next instead (the rows decide; the broker is never read)."""
    db, job, ids = planned
    with db.session() as session:
        other = keys.create_key(session, name="other").id
    waiting = new_sent_job(db, other)
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30) is None, "a sent job goes first"
    with db.session() as session:
        assert jobs.claim(session, waiting, "w2", 30) is not None
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30).id == ids[0], "taken: the chain goes on"

    retried = _sent_shard(db, job.owner_id)
    with db.session() as session:
        session.execute(update(Shard).where(Shard.id == retried).values(attempts=1))
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30) is None, "a retried shard goes first"
        session.execute(update(Shard).where(Shard.id == retried).values(state="succeeded"))

    finishing, _ = _sharded_job(db, other, ["X"])
    with db.session() as session:
        session.execute(
            update(Job)
            .where(Job.id == finishing.id)
            .values(shards_done=Job.shards_total, finalize_enqueued_at=func.now())
        )
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30) is None, "a finalize goes first"
    with db.session() as session:
        assert shards.start_finalize(session, finishing.id, 3) == shards.FinalizeStart.RUN
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30).id == ids[1], "the finalize began"


def test_a_chain_skips_a_held_shard_another_transaction_holds(planned) -> None:
    db, job, ids = planned
    with db.session() as holder:
        holder.execute(select(Shard.id).where(Shard.id == ids[0]).with_for_update())
        with db.session() as session:
            assert shards.claim_next_held(session, job.id, "w", 30).id == ids[1]


def test_a_cancelled_jobs_held_shards_are_not_chained(planned) -> None:
    db, job, ids = planned
    with db.session() as session:
        session.execute(update(Job).where(Job.id == job.id).values(cancel_requested=True))
    with db.session() as session:
        assert shards.claim_next_held(session, job.id, "w", 30) is None


def test_storing_a_shard_claims_the_next_in_the_same_transaction(planned) -> None:
    db, job, ids = planned
    with db.session() as session:
        shards.claim_shard(session, ids[0], "w", 30)
    with db.session() as session:
        done = shards.complete_shard(session, ids[0], "w", [1, 2], {"count": 2}, 2.5, chain_lease=30)
    assert done.stored and not done.last and done.next.id == ids[1]
    assert done.next.time_limit == pytest.approx(60 - 2.5), "the time the job's shards used counts"
    with db.session() as session:
        session.execute(update(Shard).where(Shard.id == ids[2]).values(enqueued_at=func.now()))
    with db.session() as session:
        done = shards.complete_shard(session, ids[1], "w", [3], {"count": 1}, 0.1, chain_lease=30)
    assert done.stored and done.next is None, "the last one left was sent: its message runs it"
    with db.session() as session:
        counts = session.execute(select(Job.shards_done, Job.rows_done).where(Job.id == job.id)).one()
    assert tuple(counts) == (2, 3)


def test_a_lost_lease_stores_nothing_and_chains_nothing(planned) -> None:
    db, job, ids = planned
    with db.session() as session:
        shards.claim_shard(session, ids[0], "w1", 30)
    with db.session() as session:
        done = shards.complete_shard(session, ids[0], "w2", [1], {"count": 1}, 0.1, chain_lease=30)
    assert not done.stored and done.next is None
    with db.session() as session:
        held = session.scalars(select(Shard.id).where(Shard.job_id == job.id, Shard.state == "queued"))
        assert sorted(held) == ids[1:]


@pytest.mark.parametrize(
    ("every", "recorded"), [(timedelta(hours=1), [1, 5]), (timedelta(0), [1, 2, 3, 4, 5])]
)
def test_a_jobs_progress_event_is_recorded_when_due_and_by_its_last_shard(
    isolated_db: Database, monkeypatch: pytest.MonkeyPatch, every: timedelta, recorded: list[int]
) -> None:
    """A progress event is a row with triggers and a NOTIFY: a job records one per PROGRESS_EVERY (its
    first shard's when none was), and always its last shard's, whose counts say it is done."""
    monkeypatch.setattr(shards, "PROGRESS_EVERY", every)
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    job, ids = _sharded_job(isolated_db, owner, ["AA", "AC", "AG", "AX", "CE"])
    for n, shard_id in enumerate(ids):
        with isolated_db.session() as session:
            shards.claim_shard(session, shard_id, "w", 30)
        with isolated_db.session() as session:
            shards.complete_shard(session, shard_id, "w", [n], {"count": 1}, 0.1)
    with isolated_db.session() as session:
        progress = session.scalars(
            select(JobEvent.detail).where(JobEvent.job_id == job.id, JobEvent.event == "progress")
        ).all()
    assert [p["shards_done"] for p in progress] == recorded
    assert progress[-1]["shards_done"] == progress[-1]["shards_total"] == len(ids)

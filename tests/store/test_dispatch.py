"""Fair release (store.dispatch) on a database no worker looks at: each client has at most a window of
jobs and of shards sent or running, so a newcomer never queues behind another client's backlog."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, insert, select, update

from store import dispatch, heartbeats, jobs, keys, shards
from store.db import Database
from store.models import Job, Shard


@pytest.fixture
def owners(isolated_db: Database) -> tuple[int, int]:
    with isolated_db.session() as session:
        return keys.create_key(session, name="a").id, keys.create_key(session, name="b").id


def submit(db: Database, owner: int, count: int = 1, kind: str = "dice") -> list[uuid.UUID]:
    with db.session() as session:
        now = datetime.now(UTC)  # distinct creation times: "oldest first" is then one order
        rows = [
            {
                **_columns(jobs.job_row(owner, kind, {"n": n}, jobs.params_hash(kind, {"n": n}), 60)),
                "created_at": now + timedelta(microseconds=n),
            }
            for n in range(count)
        ]
        return list(session.scalars(insert(Job).returning(Job.id, sort_by_parameter_order=True), rows))


def _columns(job: Job) -> dict:
    return {c.key: getattr(job, c.key) for c in Job.__table__.columns if getattr(job, c.key) is not None}


def release(db: Database, window: int) -> dispatch.Released:
    with db.session() as session:
        return dispatch.release(session, window)


def test_a_client_has_at_most_a_window_of_jobs_sent_or_running(isolated_db: Database, owners) -> None:
    a, _ = owners
    ids = submit(isolated_db, a, 5)
    assert release(isolated_db, 2).jobs == ids[:2], "oldest first"
    assert release(isolated_db, 2).jobs == []
    with isolated_db.session() as session:
        jobs.claim(session, ids[0], "w", 30)
    assert release(isolated_db, 2).jobs == [], "a running job still holds its place"
    with isolated_db.session() as session:
        jobs.finish(session, ids[0], "w", state="succeeded", result={})
    assert release(isolated_db, 2).jobs == [ids[2]]


def test_a_newcomer_is_not_queued_behind_another_clients_backlog(isolated_db: Database, owners) -> None:
    a, b = owners
    backlog = submit(isolated_db, a, 1000)
    assert len(release(isolated_db, 3).jobs) == 3
    newcomer = submit(isolated_db, b)
    assert release(isolated_db, 3).jobs == newcomer, "sent at once: only 3 of the 1,000 are ahead of it"
    with isolated_db.session() as session:
        sent = session.scalar(select(Job.enqueued_at).where(Job.id == backlog[3]))
    assert sent is None


def test_a_sharded_job_between_its_shards_holds_no_job_place(isolated_db: Database, owners) -> None:
    a, _ = owners
    bulk, interactive = submit(isolated_db, a, 1, kind="planetx.enumerate") + submit(isolated_db, a)
    assert release(isolated_db, 1).jobs == [bulk]
    with isolated_db.session() as session:
        jobs.claim(session, bulk, "planner", 30)
        planned = shards.create_shards(session, bulk, "planner", ["A", "B", "C"])
    released = release(isolated_db, 1)
    assert released.jobs == [interactive] and released.shards == planned[:1]


def test_each_client_gets_a_window_of_shards(isolated_db: Database, owners) -> None:
    planned = {}
    for owner in owners:
        (job,) = submit(isolated_db, owner, kind="planetx.enumerate")
        with isolated_db.session() as session:
            session.execute(update(Job).where(Job.id == job).values(enqueued_at=None))
            jobs.claim(session, job, "planner", 30)
            planned[owner] = shards.create_shards(session, job, "planner", ["A", "B", "C", "D"])
    released = release(isolated_db, 2).shards
    assert sorted(released) == sorted(planned[owners[0]][:2] + planned[owners[1]][:2])
    assert release(isolated_db, 2).shards == []


def test_the_window_is_the_live_worker_processes_plus_one(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        assert dispatch.window(session, alive_within=15) == dispatch.MIN_WINDOW
        heartbeats.beat(session, "host", [1, 2, 3, 4], "boot1")
    with isolated_db.session() as session:
        assert dispatch.window(session, alive_within=15) == 5


def test_the_window_counts_no_webhook_sender_nor_a_stopped_worker(isolated_db: Database, owners) -> None:
    """Before: `zolve up`'s two webhook processes counted, so a key had six jobs in flight for three
    processes that could run them (the fairness audit), and a worker stopped cleanly counted for a lease."""
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [1, 2], "solvers")
        heartbeats.beat(session, "host", [3, 4], "senders", solves=False)
        heartbeats.register(session, "host", 5, "senders", solves=False)  # a new pool process
    with isolated_db.session() as session:
        assert dispatch.window(session, alive_within=15) == 3
        heartbeats.beat(session, "host", [6], "short-lane")
    with isolated_db.session() as session:
        assert dispatch.window(session, alive_within=15) == 4
        heartbeats.stop(session, "short-lane")
    with isolated_db.session() as session:
        assert dispatch.window(session, alive_within=15) == 3
    a, _ = owners
    jobs = submit(isolated_db, a, 7)
    with isolated_db.session() as session:
        assert dispatch.release(session, None, {a}, alive_within=15).jobs == jobs[:3], (
            "the release's own count"
        )


def test_a_release_without_a_window_takes_the_live_worker_processes_plus_one(
    isolated_db: Database, owners
) -> None:
    """The window read in the release's own statement (issue 32: a submit's round trip fewer)."""
    a, b = owners
    first, second = submit(isolated_db, a, 7), submit(isolated_db, b, 7)
    with isolated_db.session() as session:
        assert dispatch.release(session, None, {a}, alive_within=15).jobs == first[: dispatch.MIN_WINDOW]
        heartbeats.beat(session, "host", [1, 2, 3, 4], "boot1")
    with isolated_db.session() as session:
        assert dispatch.release(session, None, {b}, alive_within=15).jobs == second[:5]


def test_a_shard_whose_worker_died_goes_first_and_is_marked_retried(isolated_db: Database, owners) -> None:
    a, _ = owners
    (job,) = submit(isolated_db, a, kind="planetx.enumerate")
    with isolated_db.session() as session:
        jobs.claim(session, job, "planner", 30)
        planned = shards.create_shards(session, job, "planner", ["A", "B", "C", "D"])
        shards.claim_shard(session, planned[2], "dead", 30)  # C ran first, by a duplicate message
        session.execute(
            update(Shard)
            .where(Shard.id == planned[2])
            .values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    with isolated_db.session() as session:
        shards.sweep_shards(session, max_attempts=3, requeue_after=None, stale_after=60)
    first = release(isolated_db, 1)
    assert first.retried_shards == [planned[2]] and first.shards == [], "C before A, B and D"
    with isolated_db.session() as session:
        shards.claim_shard(session, planned[2], "w", 30)
        shards.complete_shard(session, planned[2], "w", [], {"count": 0}, 0.1)
    assert release(isolated_db, 1).shards == planned[:1], "then the line in order"


def test_releases_of_two_clients_never_wait_on_each_other(isolated_db: Database, owners) -> None:
    from sqlalchemy import text

    a, b = owners
    submit(isolated_db, a, 2)
    theirs = submit(isolated_db, b, 2)
    with isolated_db.session() as holding:  # b's release, its transaction still open
        assert dispatch.release(holding, window=1, owners={b}).jobs == theirs[:1]
        with isolated_db.session() as session:
            session.execute(text("SET LOCAL lock_timeout = '2s'"))
            assert len(dispatch.release(session, window=1, owners={a}).jobs) == 1, "a's went meanwhile"
            with pytest.raises(Exception, match="lock timeout"):  # b's own next release waits its turn
                dispatch.release(session, window=1, owners={b})


def test_a_release_counts_a_clients_sent_jobs_from_their_own_index(isolated_db: Database, owners) -> None:
    """However many jobs a client holds, counting the ones that take a place in its window reads only those
    (ix_jobs_sent): before it, each release read every unfinished job of the client."""
    from sqlalchemy import BigInteger, literal, text

    a, _ = owners
    submit(isolated_db, a, 3000)
    assert len(release(isolated_db, 2).jobs) == 2
    with isolated_db.session() as session:
        session.execute(text("ANALYZE jobs"))
    # the release's own choice of a client's jobs (the UPDATE's materialised CTE), for client `a`
    owner = select(literal(a, BigInteger).label("owner_id"), literal(2).label("window")).subquery("owners")
    picked = dispatch._jobs_picked(owner)
    with isolated_db.session() as session:
        query = picked.compile(dialect=session.bind.dialect, compile_kwargs={"literal_binds": True})
        plan = session.execute(text(f"EXPLAIN (ANALYZE, BUFFERS) {query}")).scalars().all()
    assert any("ix_jobs_sent" in line for line in plan), "\n".join(plan)


def _submit_with(db: Database, owner: int, priorities: list[int]) -> list[uuid.UUID]:
    """Jobs of `owner` with these priorities, in this (submit) order."""
    with db.session() as session:
        now = datetime.now(UTC)
        rows = [
            {
                **_columns(jobs.job_row(owner, "dice", {"n": n}, jobs.params_hash("dice", {"n": n}), 60)),
                "created_at": now + timedelta(microseconds=n),
                "priority": priority,
            }
            for n, priority in enumerate(priorities)
        ]
        return list(session.scalars(insert(Job).returning(Job.id, sort_by_parameter_order=True), rows))


def _set_key(db: Database, owner: int, **values: object) -> None:
    from store.models import ApiKey

    with db.session() as session:
        session.execute(update(ApiKey).where(ApiKey.id == owner).values(**values))


def test_a_clients_higher_priority_jobs_go_first_then_the_oldest(isolated_db: Database, owners) -> None:
    a, _ = owners
    low, high, none, higher, also_high = _submit_with(isolated_db, a, [-10, 50, 0, 100, 50])
    assert set(release(isolated_db, 2).jobs) == {higher, high}
    with isolated_db.session() as session:
        for job_id in (higher, high):
            jobs.claim(session, job_id, "w", 30)
            jobs.finish(session, job_id, "w", state="succeeded", result={})
    assert set(release(isolated_db, 2).jobs) == {also_high, none}
    with isolated_db.session() as session:
        for job_id in (also_high, none):
            jobs.claim(session, job_id, "w", 30)
            jobs.finish(session, job_id, "w", state="succeeded", result={})
    assert release(isolated_db, 2).jobs == [low]


def test_a_keys_window_is_its_weight_times_the_services_at_most_its_own_cap(
    isolated_db: Database, owners
) -> None:
    a, b = owners
    light, capped = keys_made(isolated_db), keys_made(isolated_db)
    _set_key(isolated_db, a, weight=3)
    _set_key(isolated_db, light, weight=0.1)
    _set_key(isolated_db, capped, weight=5, max_in_flight=1)
    for owner in (a, b, light, capped):
        submit(isolated_db, owner, 20)
    released = release(isolated_db, 2).jobs
    with isolated_db.session() as session:
        by_owner = select(Job.owner_id, func.count()).where(Job.id.in_(released)).group_by(Job.owner_id)
        sent = {owner: count for owner, count in session.execute(by_owner)}
    assert sent == {a: 6, b: 2, light: 1, capped: 1}


def keys_made(db: Database) -> int:
    with db.session() as session:
        return keys.create_key(session, name="c").id

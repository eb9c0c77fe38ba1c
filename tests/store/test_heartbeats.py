"""Worker identity and liveness (store.heartbeats): each Celery worker start beats only for its own
processes, and a dead process's leases end within a sweep instead of when they run out."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from store import heartbeats, jobs, keys, shards
from store.db import Database
from store.models import Job, Shard, Worker
from tests.support import new_job


@pytest.fixture
def owner(isolated_db: Database) -> int:
    with isolated_db.session() as session:
        return keys.create_key(session, name="heartbeats").id


def rows(db: Database) -> dict[str, tuple[str | None, bool]]:
    with db.session() as session:
        return {w.name: (w.boot_id, w.stopped_at is None) for w in session.scalars(select(Worker))}


def lease_expires_soon(db: Database, model: type, row_id: object) -> bool:
    with db.session() as session:
        return session.scalar(select(model.lease_expires_at < func.now()).where(model.id == row_id))


def test_two_workers_on_one_host_keep_their_own_rows(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [11, 12], "boot-a", "zolve-a@host")
        heartbeats.beat(session, "host", [21], "boot-b", "zolve-b@host")
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [11, 12], "boot-a", "zolve-a@host")
    assert rows(isolated_db) == {
        "host:11:boot-a": ("boot-a", True),
        "host:12:boot-a": ("boot-a", True),
        "host:21:boot-b": ("boot-b", True),
    }, "one worker's heartbeat never touches the other's processes"


def test_a_process_that_left_its_pool_is_stopped_and_its_lease_ends(isolated_db: Database, owner) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        heartbeats.register(session, "host", 11, "boot-a")
        heartbeats.beat(session, "host", [11, 12], "boot-a", "zolve-a@host")
        jobs.claim(session, job.id, "host:11:boot-a", 30)
    with isolated_db.session() as session:
        assert heartbeats.expire_orphaned_leases(session, alive_within=15) == 0, "its process lives"
        heartbeats.beat(session, "host", [12, 13], "boot-a", "zolve-a@host")  # 11 was killed
    assert rows(isolated_db)["host:11:boot-a"] == ("boot-a", False)
    with isolated_db.session() as session:
        assert heartbeats.expire_orphaned_leases(session, alive_within=15) == 1
    assert lease_expires_soon(isolated_db, Job, job.id)
    with isolated_db.session() as session:
        report = jobs.sweep(session, max_attempts=3, requeue_after=None)
    assert report.to_enqueue == [job.id], "requeued at the next sweep, not 30 s later"


def test_a_silent_worker_loses_only_leases_it_stopped_renewing(isolated_db: Database, owner) -> None:
    renewing, silent, unknown = (new_job(isolated_db, owner, params={"n": n}) for n in range(3))
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [11, 12], "boot-a")
        jobs.claim(session, renewing.id, "host:11:boot-a", 30)
        jobs.claim(session, silent.id, "host:12:boot-a", 30)
        jobs.claim(session, unknown.id, "not-announced-yet", 30)
        long_ago = func.now() - timedelta(minutes=1)
        session.execute(update(Worker).values(heartbeat_at=long_ago))  # the parent stopped beating
        session.execute(update(Job).where(Job.id == silent.id).values(heartbeat_at=long_ago))
        session.execute(update(Job).where(Job.id == unknown.id).values(heartbeat_at=long_ago))
    with isolated_db.session() as session:
        assert heartbeats.expire_orphaned_leases(session, alive_within=15) == 1
    assert lease_expires_soon(isolated_db, Job, silent.id)
    assert not lease_expires_soon(isolated_db, Job, renewing.id), "a process still renewing is alive"
    assert not lease_expires_soon(isolated_db, Job, unknown.id), "no row: left to its lease"


def test_right_after_a_database_outage_silence_proves_nothing(isolated_db: Database, owner) -> None:
    job = new_job(isolated_db, owner)
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [11], "boot-a")
        jobs.claim(session, job.id, "host:11:boot-a", 30)
        long_ago = func.now() - timedelta(minutes=1)
        session.execute(update(Worker).values(heartbeat_at=long_ago))
        session.execute(update(Job).where(Job.id == job.id).values(heartbeat_at=long_ago))
    with isolated_db.session() as session:
        assert heartbeats.expire_orphaned_leases(session, alive_within=15, judge_silence=False) == 0
    assert not lease_expires_soon(isolated_db, Job, job.id), "left to its lease"
    with isolated_db.session() as session:
        assert heartbeats.expire_orphaned_leases(session, alive_within=15) == 1


def test_a_dead_process_loses_its_shard_leases_too(isolated_db: Database, owner) -> None:
    job = new_job(isolated_db, owner, "planetx.enumerate", {"mode": "standard"})
    with isolated_db.session() as session:
        jobs.claim(session, job.id, "planner", 30)
        (shard_id,) = shards.create_shards(session, job.id, "planner", ["A"])
        heartbeats.beat(session, "host", [11], "boot-a")
        shards.claim_shard(session, shard_id, "host:11:boot-a", 30)
    with isolated_db.session() as session:
        heartbeats.beat(session, "host", [], "boot-a")
    with isolated_db.session() as session:
        assert heartbeats.expire_orphaned_leases(session, alive_within=15) == 1
    assert lease_expires_soon(isolated_db, Shard, shard_id)


def test_concurrent_heartbeats_never_deadlock(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        heartbeats.beat(session, "old", [1, 2, 3], "boot-old")
        session.execute(update(Worker).values(heartbeat_at=func.now() - timedelta(days=2)))
    errors: list[BaseException] = []

    def beat_many(boot: str, pids: list[int]) -> None:
        try:
            for round_ in range(40):
                with isolated_db.session() as session:
                    heartbeats.beat(session, "host", pids[round_ % 2 :], boot, f"zolve-{boot}@host")
                    heartbeats.register(session, "host", 99, boot)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=beat_many, args=(f"boot-{n}", [n * 10 + i for i in range(4)]))
        for n in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    names = rows(isolated_db)
    assert not any(name.startswith("old:") for name in names), "long-dead rows forgotten"
    assert {boot for boot, _ in names.values()} == {f"boot-{n}" for n in range(4)}

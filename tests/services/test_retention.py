"""Retention on a database no worker looks at: exactly what expired goes, with its shards, events, rows and
batches; what other jobs read stays; a dry run deletes nothing. The last test lets a worker purge on its
own timer."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select, update

from core.states import JobState, ShardState
from services import retention
from store import events, jobs, keys, rows
from store.db import Database
from store.models import Batch, BatchItem, Job, JobEvent, Shard
from tests.support import poll_job, private_stack, wait_until

ENUMERATE = "planetx.enumerate"


@pytest.fixture
def owner(isolated_db: Database) -> int:
    with isolated_db.session() as session:
        return keys.create_key(session, name="owner").id


def make_job(
    db: Database,
    owner: int,
    *,
    days_ago: float | None,
    state: JobState = JobState.SUCCEEDED,
    kind: str = "dice",
    params: dict | None = None,
    boards: list[int] = (),
    rows_of: uuid.UUID | None = None,
) -> uuid.UUID:
    """A job in `state` that finished `days_ago` (None: unfinished), storing `boards` as its own rows (or
    reading those of `rows_of`), with a shard and its history."""
    with db.session() as session:
        job, _ = jobs.create_job(
            session, owner_id=owner, kind=kind, params=params or {"seed": str(uuid.uuid4())}, time_limit=60
        )
        session.add(Shard(job_id=job.id, key="k", state=ShardState.SUCCEEDED))
        events.record(session, job.id, str(state))
        if boards:
            rows.copy_rows(session, job.id, list(boards))
        finished = None if days_ago is None else datetime.now(UTC) - timedelta(days=days_ago)
        rows_job_id = rows_of or (job.id if boards else None)
        session.execute(
            update(Job)
            .where(Job.id == job.id)
            .values(state=state, finished_at=finished, rows_job_id=rows_job_id)
        )
    return job.id


def existing(db: Database, ids: list[uuid.UUID]) -> set[uuid.UUID]:
    with db.session() as session:
        return set(session.scalars(select(Job.id).where(Job.id.in_(ids))))


def count(db: Database, column, ids: list[uuid.UUID]) -> int:
    with db.session() as session:
        return session.scalar(select(func.count()).where(column.in_(ids)))


def stored(db: Database, ids: list[uuid.UUID]) -> int:
    """How many boards these jobs stored (keys in blocks)."""
    with db.session() as session:
        return sum(len(rows.keys_stored(session, job_id)) for job_id in ids)


def test_exactly_the_expired_jobs_go_with_their_shards_events_and_rows(isolated_db: Database, owner: int):
    old = make_job(isolated_db, owner, days_ago=40, boards=[1, 2, 3])
    old_failed = make_job(isolated_db, owner, days_ago=31, state=JobState.FAILED)
    old_cancelled = make_job(isolated_db, owner, days_ago=90, state=JobState.CANCELLED)
    recent = make_job(isolated_db, owner, days_ago=29, boards=[4])
    running = make_job(isolated_db, owner, days_ago=None, state=JobState.RUNNING)
    queued = make_job(isolated_db, owner, days_ago=None, state=JobState.QUEUED)
    mine = [old, old_failed, old_cancelled, recent, running, queued]

    dry = retention.purge(isolated_db, timedelta(days=30), dry_run=True)
    assert existing(isolated_db, mine) == set(mine), "a dry run deletes nothing"
    report = retention.purge(isolated_db, timedelta(days=30))

    assert existing(isolated_db, mine) == {recent, running, queued}
    gone = [old, old_failed, old_cancelled]
    assert count(isolated_db, Shard.job_id, gone) == count(isolated_db, JobEvent.job_id, gone) == 0
    assert stored(isolated_db, [old]) == 0
    assert stored(isolated_db, [recent]) == 1
    assert (report.jobs, report.rows, report.shards) == (3, 3, 3)
    assert report.events >= 3  # each job's "created" and the event made here
    assert (dry.jobs, dry.rows, dry.shards, dry.events) == (
        report.jobs,
        report.rows,
        report.shards,
        report.events,
    )
    assert retention.purge(isolated_db, timedelta(days=30)).jobs == 0, "a second purge finds nothing"


def test_the_enumeration_deduce_reads_stays_and_so_do_rows_a_kept_job_reads(
    isolated_db: Database, owner: int
):
    standard = {"mode": "standard", "constraints": []}
    older = make_job(isolated_db, owner, days_ago=60, kind=ENUMERATE, params=standard, boards=[10, 11])
    newest = make_job(isolated_db, owner, days_ago=50, kind=ENUMERATE, params=standard, boards=[12, 13])
    old_copy = make_job(isolated_db, owner, days_ago=45, kind=ENUMERATE, params=standard, rows_of=newest)
    constrained = {"mode": "expert", "constraints": [{"sector": 1, "object": "comet", "present": True}]}
    narrow = make_job(isolated_db, owner, days_ago=70, kind=ENUMERATE, params=constrained, boards=[20])
    read_later = make_job(isolated_db, owner, days_ago=70, kind=ENUMERATE, params=constrained, boards=[21])
    fresh_copy = make_job(
        isolated_db, owner, days_ago=1, kind=ENUMERATE, params=constrained, rows_of=read_later
    )
    mine = [older, newest, old_copy, narrow, read_later, fresh_copy]

    # the copy (45 days) is the newest succeeded job of the mode: its rows' job (newest) is what deduce reads
    assert newest in retention.pinned_jobs(isolated_db)
    report = retention.purge(isolated_db, timedelta(days=30))

    assert existing(isolated_db, mine) == {newest, read_later, fresh_copy}
    assert stored(isolated_db, [newest]) == 2 and stored(isolated_db, [read_later]) == 1
    assert stored(isolated_db, [older, narrow]) == 0
    assert report.kept >= 2


def test_rows_whose_job_went_stay_while_a_cache_hit_still_reads_them(isolated_db: Database, owner: int):
    """The race a purge in chunks meets: a chunk deletes an expired source job; before the chunk that
    deletes its rows, a new request is a cache hit on those rows. They are no orphans: they stay."""
    params = {"mode": "standard", "constraints": [{"sector": 2, "object": "comet"}]}
    source = make_job(isolated_db, owner, days_ago=40, kind=ENUMERATE, params=params, boards=[30, 31])
    abandoned = make_job(isolated_db, owner, days_ago=40, boards=[32])
    with isolated_db.session() as session:  # the earlier chunk: job rows gone, their boards not yet
        session.execute(delete(Job).where(Job.id.in_([source, abandoned])))
    hit = make_job(isolated_db, owner, days_ago=0, kind=ENUMERATE, params=params, rows_of=source)

    report = retention.purge(isolated_db, timedelta(days=30))

    assert stored(isolated_db, [source]) == 2, "the cache hit still serves them"
    assert stored(isolated_db, [abandoned]) == 0 and report.rows == 1
    assert existing(isolated_db, [hit]) == {hit}


def test_a_batch_goes_once_none_of_its_jobs_stays(isolated_db: Database, owner: int):
    def batch_with(job_id: uuid.UUID, days_ago: float) -> uuid.UUID:
        with isolated_db.session() as session:
            batch = Batch(id=uuid.uuid4(), owner_id=owner, kind="dice", item_count=2, job_count=1)
            session.add(batch)
            session.flush()
            session.execute(
                BatchItem.__table__.insert(),
                [
                    {"batch_id": batch.id, "position": 0, "client_id": "a", "job_id": job_id},
                    {
                        "batch_id": batch.id,
                        "position": 1,
                        "client_id": "b",
                        "job_id": None,
                        "error": {"x": 1},
                    },
                ],
            )
            session.execute(
                update(Batch)
                .where(Batch.id == batch.id)
                .values(created_at=func.now() - timedelta(days=days_ago))
            )
            return batch.id

    finished = batch_with(make_job(isolated_db, owner, days_ago=35), 36)
    still_running = batch_with(make_job(isolated_db, owner, days_ago=None, state=JobState.RUNNING), 36)
    recent = batch_with(make_job(isolated_db, owner, days_ago=1), 2)

    report = retention.purge(isolated_db, timedelta(days=30))

    with isolated_db.session() as session:
        left = set(session.scalars(select(Batch.id).where(Batch.id.in_([finished, still_running, recent]))))
    assert left == {still_running, recent}
    assert report.batches == 1


def test_the_workers_purge_on_their_own_timer(settings, tmp_path: Path) -> None:
    """A worker told to keep finished jobs two seconds purges one it ran; the API then answers 404."""
    env = {"ZOLVE_RETENTION_DAYS": str(2 / 86400), "ZOLVE_PURGE_INTERVAL": "0.5"}
    with private_stack(settings, tmp_path / "stack", env=env) as stack:
        stack.worker.start()
        job_id = stack.client.post(
            "/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 4}}, headers=stack.headers
        ).get_json()["id"]
        assert poll_job(stack.client, stack.headers, job_id, 60)["state"] == "succeeded"
        wait_until(
            lambda: stack.client.get(f"/jobs/{job_id}?wait=1", headers=stack.headers).status_code == 404,
            timeout=30,
        )
        # the purge logs once it is over (its rows, batches and counters come after the job)
        wait_until(lambda: "purge: 1 jobs" in stack.worker.log_path.read_text(), timeout=30)


def test_zolve_purge_reports_what_it_removes_and_a_dry_run_removes_nothing(
    isolated_db: Database, owner: int, settings
) -> None:
    import os

    from tests.test_cli import zolve

    old = make_job(isolated_db, owner, days_ago=3, boards=[5, 6])
    recent = make_job(isolated_db, owner, days_ago=0.5)
    env = {**os.environ, "DATABASE_URL": isolated_db.url, "REDIS_URL": settings.redis_url}

    dry = zolve("purge", "--older-than", "2d", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("would purge 1 jobs finished more than 2 days ago (2 rows, 1 shards"), (
        dry.stdout
    )
    assert existing(isolated_db, [old, recent]) == {old, recent}

    done = zolve("purge", "--older-than", "36h", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("purged 1 jobs finished more than 36 hours ago"), done.stdout
    assert existing(isolated_db, [old, recent]) == {recent}

    bad = zolve("purge", "--older-than", "١d", env=env)
    assert bad.returncode == 2 and "not a duration" in bad.stderr


def test_zolve_purge_takes_a_moment_instead_of_an_age(isolated_db: Database, owner: int, settings) -> None:
    """--finished-before: a cutoff that does not move with when the command starts (UTC without an offset)."""
    import os

    from tests.test_cli import zolve

    old = make_job(isolated_db, owner, days_ago=3)
    recent = make_job(isolated_db, owner, days_ago=1)
    env = {**os.environ, "DATABASE_URL": isolated_db.url, "REDIS_URL": settings.redis_url}
    moment = (datetime.now(UTC) - timedelta(days=2)).replace(tzinfo=None).isoformat(timespec="seconds")
    done = zolve("purge", "--finished-before", moment, env=env)
    assert done.returncode == 0 and done.stdout.startswith("purged 1 jobs finished before "), done.stdout
    assert f"{moment}+00:00" in done.stdout and existing(isolated_db, [old, recent]) == {recent}

    both = zolve("purge", "--finished-before", moment, "--older-than", "2d", env=env)
    assert both.returncode == 2 and "not both" in both.stderr
    bad = zolve("purge", "--finished-before", "yesterday", env=env)
    assert bad.returncode == 2 and "not a moment" in bad.stderr

"""The API's in-memory job cache (api/job_cache.py): bounded by bytes, and big results kept out of it."""

from __future__ import annotations

import uuid

from sqlalchemy import update

from api.extension import zolve
from store import jobs as job_store
from store import keys
from store.models import Job


def _finished_job(db, headers: dict[str, str], result: dict) -> uuid.UUID:
    with db.session() as session:
        owner = keys.authenticate(session, headers["Authorization"].split()[1]).id
        job, _ = job_store.create_job(session, owner_id=owner, kind="dice", params={"dice": 3}, time_limit=60)
        session.execute(
            update(Job)
            .where(Job.id == job.id)
            .values(state="succeeded", result=result, finished_at=Job.created_at)
        )
        return job.id


def test_a_big_result_is_read_from_the_database_not_kept_in_memory(app, client, db, auth) -> None:
    small = _finished_job(db, auth, {"wins": 1})
    big = _finished_job(db, auth, {"blob": "x" * 200_000})
    for job_id in (small, big):
        answer = client.get(f"/jobs/{job_id}", headers=auth)
        assert answer.status_code == 200 and answer.get_json()["state"] == "succeeded"
    cache = zolve(app).status_cache
    assert small in cache, "a small finished job is served from memory"
    assert big not in cache, "a 200 KB result is not held in the API's memory"
    assert len(client.get(f"/jobs/{big}", headers=auth).get_json()["result"]["blob"]) == 200_000


def test_the_cache_holds_at_most_its_bytes_whatever_many_threads_fill_it(db, auth) -> None:
    import threading

    from api.job_cache import JobCache

    with db.session() as session:
        rows = [session.get(Job, _finished_job(db, auth, {"n": "y" * 2000})) for _ in range(20)]
        session.expunge_all()
    cache = JobCache(max_bytes=20_000)
    errors: list[BaseException] = []

    def fill() -> None:
        try:
            for _ in range(50):
                for job in rows:
                    cache.put(job, 60)
                    cache.get(job.id)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=fill) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and 0 < cache.held_bytes <= 20_000
    assert sum(job.id in cache for job in rows) <= 20_000 // 3000

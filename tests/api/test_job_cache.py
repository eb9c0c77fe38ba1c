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


def _failed_job(db, headers: dict[str, str]) -> uuid.UUID:
    job_id = _finished_job(db, headers, {})
    error = {"type": "ValueError", "message": "boom", "traceback": "Traceback (most recent call last): boom"}
    with db.session() as session:
        session.execute(update(Job).where(Job.id == job_id).values(state="failed", result=None, error=error))
    return job_id


def test_a_cached_job_is_rendered_once_per_role_and_each_role_gets_its_own(
    client, db, auth, make_key, monkeypatch
) -> None:
    import api.jobs

    rendered: list[bool] = []
    render = api.jobs._render

    def counted(job: Job, is_admin: bool) -> bytes:
        rendered.append(is_admin)
        return render(job, is_admin)

    monkeypatch.setattr(api.jobs, "_render", counted)
    job_id = _failed_job(db, auth)
    admin = make_key(admin=True)
    admin_answers = [client.get(f"/jobs/{job_id}", headers=admin) for _ in range(3)]
    owner_answers = [client.get(f"/jobs/{job_id}", headers=auth) for _ in range(3)]
    assert rendered == [True, False], "each role's answer is rendered once while the job is cached"
    assert all(a.get_data() == admin_answers[0].get_data() for a in admin_answers)
    assert all(a.get_data() == owner_answers[0].get_data() for a in owner_answers)
    assert "traceback" in admin_answers[0].get_json()["error"], "admins see the traceback"
    assert "traceback" not in owner_answers[0].get_json()["error"], "not the admin's answer"
    assert admin_answers[0].headers["ETag"] != owner_answers[0].headers["ETag"]
    again = client.get(f"/jobs/{job_id}", headers={**auth, "If-None-Match": owner_answers[0].headers["ETag"]})
    assert again.status_code == 304


def test_a_cached_answer_is_the_jobs_own_not_an_older_copys(app, client, db, auth) -> None:
    job_id = _finished_job(db, auth, {"wins": 1})
    first = client.get(f"/jobs/{job_id}", headers=auth)
    with db.session() as session:
        session.execute(update(Job).where(Job.id == job_id).values(result={"wins": 2}))
    zolve(app).status_cache.forget(job_id)  # as a retry or cancel by this app does
    second = client.get(f"/jobs/{job_id}", headers=auth)
    assert (first.get_json()["result"], second.get_json()["result"]) == ({"wins": 1}, {"wins": 2})
    assert first.headers["ETag"] != second.headers["ETag"]


def test_a_cached_answer_is_not_served_under_another_prefix(client, db, auth) -> None:
    """Behind a proxy that mounts the API under a prefix, the links of a cached answer keep each request's."""
    job_id = _finished_job(db, auth, {"wins": 1})
    plain = client.get(f"/jobs/{job_id}", headers=auth).get_json()
    mounted = client.get(f"/jobs/{job_id}", headers=auth, base_url="http://localhost/zolve").get_json()
    assert plain["links"]["self"] == f"/jobs/{job_id}"
    assert mounted["links"]["self"] == f"/zolve/jobs/{job_id}"

"""The API's in-memory job cache (api/job_cache.py): bounded by bytes, and big results kept out of it."""

from __future__ import annotations

import time
import uuid

import pytest
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


def _queued_jobs(db, count: int) -> list[uuid.UUID]:
    """Unfinished jobs in a database no worker looks at (nothing but the test changes them)."""
    with db.session() as session:
        owner = keys.create_key(session, name="cache").id
        jobs = [
            job_store.create_job(session, owner_id=owner, kind="dice", params={"dice": n}, time_limit=60)[0]
            for n in range(count)
        ]
        return [job.id for job in jobs]


def _set_progress(db, job_ids: list[uuid.UUID], progress: dict) -> None:
    with db.session() as session:
        session.execute(update(Job).where(Job.id.in_(job_ids)).values(progress=progress))


def test_jobs_polled_often_are_read_again_in_the_background_many_in_one_query(isolated_db) -> None:
    from api.job_cache import JobCache
    from services.reads.jobs import read_jobs

    ids = _queued_jobs(isolated_db, 30)
    load = read_jobs(isolated_db)
    batches: list[int] = []

    def counted(job_ids):
        batches.append(len(job_ids))
        return load(job_ids)

    # a lifetime long enough for the background read to come before it ends on a loaded machine too
    cache = JobCache(load=counted, unfinished_seconds=10.0)
    for job in load(ids):
        cache.put(job)
    _set_progress(isolated_db, ids, {"step": 2})
    deadline, misses = time.monotonic() + 30, 0
    while time.monotonic() < deadline:
        polled = [cache.get(job_id) for job_id in ids]
        misses += polled.count(None)
        if all(job is not None and job.progress == {"step": 2} for job in polled):
            break
        time.sleep(0.01)
    else:
        raise AssertionError(f"the polled copies were not read again within 30 s (batches {batches})")
    assert misses == 0, "a job polled often is always served from memory: never read on the poll's thread"
    assert sum(batches) >= 30 and len(batches) <= 5, f"many jobs per query, not one each: {batches}"


def test_a_copy_is_never_served_past_its_lifetime_even_while_due_for_reading(isolated_db) -> None:
    from api.job_cache import JobCache
    from services.reads.jobs import read_jobs

    [job_id] = _queued_jobs(isolated_db, 1)
    cache = JobCache(load=read_jobs(isolated_db), unfinished_seconds=3.0, background=False)
    [job] = read_jobs(isolated_db)([job_id])
    cache.put(job, read_at=time.monotonic() - 2.0)
    assert cache.get(job_id) is job, "due for reading again, and still within its lifetime"
    _wait_until(lambda: cache.get(job_id) is None, "the copy past its lifetime is gone, read again or not")


def test_a_background_read_keeps_neither_a_forgotten_copy_nor_one_older_than_a_requests(isolated_db) -> None:
    from api.job_cache import JobCache
    from services.reads.jobs import read_jobs

    forgotten, overtaken, purged, refreshed, unchanged = ids = _queued_jobs(isolated_db, 5)
    load = read_jobs(isolated_db)
    old = {job.id: job for job in load(ids)}
    cache = JobCache(load=None, unfinished_seconds=10.0, background=False)
    long_ago = time.monotonic() - 7  # past 60% of its 10 s: due for reading again when polled
    for job in old.values():
        cache.put(job, read_at=long_ago)
    _set_progress(isolated_db, ids[:-1], {"step": 2})
    newer = load([overtaken])[0]

    def racing(job_ids):
        jobs = [job for job in load(job_ids) if job.id != purged]  # purged meanwhile
        cache.forget(forgotten)  # a cancel by this app, committed after the read
        cache.put(newer)  # a request's own read, after the background one began
        return jobs

    cache._load = racing
    assert all(cache.get(job_id) is old[job_id] for job_id in ids)
    cache.refresh_due()
    assert forgotten not in cache, "the copy read before this app's change is not kept"
    assert cache.get(overtaken) is newer, "a request's newer read is not replaced by the older one"
    assert purged not in cache, "a job gone from the database is gone from the cache"
    assert cache.get(refreshed).progress == {"step": 2}
    assert cache.get(unchanged) is old[unchanged], "an unchanged job keeps its copy, and the answers rendered"
    read_again: list[uuid.UUID] = []
    cache._load = lambda job_ids: read_again.extend(job_ids) or load(job_ids)
    cache.get(unchanged), cache.get(refreshed)
    cache.refresh_due()
    assert read_again == [], "both copies are new again: not due for another read"


def test_a_failed_background_read_leaves_the_jobs_to_be_read_again(isolated_db) -> None:
    from api.job_cache import JobCache
    from services.reads.jobs import read_jobs

    [job_id] = _queued_jobs(isolated_db, 1)
    load = read_jobs(isolated_db)
    failures = [ConnectionError("database restarting")]

    def flaky(job_ids):
        if failures:
            raise failures.pop()
        return load(job_ids)

    cache = JobCache(load=flaky, unfinished_seconds=10.0, background=False)
    cache.put(load([job_id])[0], read_at=time.monotonic() - 7)
    _set_progress(isolated_db, [job_id], {"step": 2})
    cache.get(job_id)
    with pytest.raises(ConnectionError):
        cache.refresh_due()
    assert cache.get(job_id).progress is None, "the copy stays served within its lifetime"
    cache.refresh_due()
    assert cache.get(job_id).progress == {"step": 2}, "asked again by the next poll, and read"


def _wait_until(condition, what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


class _Entered:
    """Counts the threads that reached JobCache.read (a semaphore released by each)."""

    def __init__(self) -> None:
        import threading

        self.count = threading.Semaphore(0)


def _watched_cache(entered: _Entered, **options):
    from api.job_cache import JobCache

    class Watched(JobCache):
        def read(self, *args, **kwargs):
            entered.count.release()
            return super().read(*args, **kwargs)

    return Watched(**options)


class _SlowRead:
    """Reads the job; the first read waits until `threads` threads have reached the cache's read (itself
    among them), and may fail."""

    def __init__(self, db, job_id: uuid.UUID, entered: _Entered, threads: int, fail_first: bool = False):
        from services.reads.jobs import read_jobs

        self.load, self.job_id, self.entered, self.threads = read_jobs(db), job_id, entered, threads
        self.fail_first, self.calls = fail_first, 0

    def __call__(self):
        self.calls += 1
        if self.calls == 1:
            for _ in range(self.threads):
                assert self.entered.count.acquire(timeout=10), "every thread reached the cache"
            if self.fail_first:
                raise ConnectionError("database restarting")
        return self.load([self.job_id])[0]


def _race(cache, job_id: uuid.UUID, read, threads: int) -> list:
    """`threads` threads poll the job at once (the first read waits until every one missed it); each
    thread's job, or its exception."""
    import threading

    outcomes: list = []

    def poll() -> None:
        try:
            outcomes.append(cache.get(job_id) or cache.read(job_id, read))
        except Exception as exc:  # noqa: BLE001 - the caller asserts on it
            outcomes.append(exc)

    pollers = [threading.Thread(target=poll) for _ in range(threads)]
    for thread in pollers:
        thread.start()
    for thread in pollers:
        thread.join(30)
    return outcomes


def test_threads_missing_the_same_job_at_once_share_one_read(isolated_db) -> None:
    [job_id] = _queued_jobs(isolated_db, 1)
    entered = _Entered()
    cache = _watched_cache(entered, unfinished_seconds=10.0)
    read = _SlowRead(isolated_db, job_id, entered, threads=8)
    outcomes = _race(cache, job_id, read, threads=8)
    assert len(outcomes) == 8 and all(getattr(job, "id", None) == job_id for job in outcomes), outcomes
    assert read.calls == 1, "one read for the eight threads that missed the job"


def test_when_a_shared_read_fails_the_threads_waiting_for_it_read_for_themselves(isolated_db) -> None:
    [job_id] = _queued_jobs(isolated_db, 1)
    entered = _Entered()
    cache = _watched_cache(entered, unfinished_seconds=10.0)
    read = _SlowRead(isolated_db, job_id, entered, threads=4, fail_first=True)
    outcomes = _race(cache, job_id, read, threads=4)
    assert sum(isinstance(outcome, ConnectionError) for outcome in outcomes) == 1, "only the failed read's"
    assert sum(getattr(job, "id", None) == job_id for job in outcomes) == 3, outcomes
    assert read.calls >= 2, "the waiting threads read for themselves"


def test_a_poll_after_a_forget_does_not_join_a_read_begun_before_it(isolated_db) -> None:
    import threading

    from api.job_cache import JobCache
    from services.reads.jobs import read_jobs

    [job_id] = _queued_jobs(isolated_db, 1)
    load = read_jobs(isolated_db)
    cache = JobCache(unfinished_seconds=10.0)
    old_read, release, new_read = threading.Event(), threading.Event(), threading.Event()
    answers: dict[str, Job] = {}

    def slow_old_read():
        job = load([job_id])[0]
        old_read.set()
        assert release.wait(10)
        return job

    def new_read_after_the_change():
        new_read.set()
        return load([job_id])[0]

    def poll(name: str, read) -> None:
        answers[name] = cache.read(job_id, read)

    first = threading.Thread(target=poll, args=("before", slow_old_read))
    first.start()
    assert old_read.wait(10)
    _set_progress(isolated_db, [job_id], {"step": 2})  # e.g. a cancel by this app
    cache.forget(job_id)
    second = threading.Thread(target=poll, args=("after", new_read_after_the_change))
    second.start()
    new_read.wait(1)  # a poll that joined the read begun before waits for it instead (2 s)
    release.set()
    for thread in (first, second):
        thread.join(10)
    assert answers["before"].progress is None
    assert answers["after"].progress == {"step": 2}, "the poll after the change reads it, not the old read"
    held = cache.get(job_id)
    assert held is None or held.progress == {"step": 2}, "the copy read before the change is not kept"


def test_a_job_forgotten_while_a_request_reads_it_is_not_kept(isolated_db) -> None:
    from api.job_cache import JobCache
    from services.reads.jobs import read_jobs

    [job_id] = _queued_jobs(isolated_db, 1)
    cache = JobCache(unfinished_seconds=10.0)

    def read_then_cancelled():
        job = read_jobs(isolated_db)([job_id])[0]
        cache.forget(job_id)  # a cancel by this app, committed after the read
        return job

    assert cache.read(job_id, read_then_cancelled).id == job_id
    assert job_id not in cache, "the copy read before the change is not served to the next poll"

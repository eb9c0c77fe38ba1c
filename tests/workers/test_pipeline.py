"""The job pipeline with a real Celery worker process: cancel, crash recovery, lost and duplicate messages."""

import time
import uuid

from api.extension import zolve
from services.messages import enqueue
from store import jobs as job_store
from store import keys
from store.models import Job
from tests.support import sent_ahead, wait_until

SLOW = {"kind": "dice", "params": {"dice": 3, "faces": 20}, "time_limit": 120}
DICE_QUICK = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


def job_row(db, job_id: str) -> Job:
    with db.session() as session:
        return session.get(Job, uuid.UUID(job_id))


def test_cancel_stops_a_running_solve_within_two_seconds(client, auth, worker, db) -> None:
    job = client.post("/jobs", json=SLOW, headers=auth).get_json()
    # running and already past its first Z3 answers: the next check() is a long one
    wait_until(
        lambda: (job_row(db, job["id"]).progress or {}).get("wins"), 120, what="the solve to be under way"
    )
    started = time.monotonic()
    response = client.post(f"/jobs/{job['id']}/cancel", headers=auth)
    assert response.status_code == 202 and response.get_json()["state"] in ("cancelling", "cancelled")
    final = wait_until(lambda: job_row(db, job["id"]).state == "cancelled", 10, 0.05, "the cancel")
    elapsed = time.monotonic() - started
    assert final and elapsed < 2.5, f"cancel took {elapsed:.2f} s"
    row = job_row(db, job["id"])
    assert row.result is None and row.lease_owner is None and row.error["type"] == "Cancelled"


def test_killed_worker_mid_job_the_job_still_finishes_once(client, auth, worker, db, wait_job) -> None:
    # 6 s of solving, ended by its time limit with the best dice found so far: 3 × 15 dice find a first
    # answer in ~0.3 s but no optimality proof in 20 s (3 × 20 needed 2-3 s quiet, over 6 s under load)
    body = {"kind": "dice", "params": {"dice": 3, "faces": 15}, "time_limit": 6}
    job = client.post("/jobs", json=body, headers=auth).get_json()
    wait_until(lambda: job_row(db, job["id"]).state == "running", 30, what="the job to start")
    time.sleep(1)
    worker.kill()
    killed_at = time.monotonic()
    worker.start()
    final = wait_job(auth, job["id"], timeout=60)
    assert final["state"] == "succeeded", final
    assert final["attempts"] == 2, "one claim by the dead worker, one by the new one"
    assert final["result"]["status"] == "sat" and final["result"]["wins"] > 0
    # it could only be reclaimed once the dead worker's lease expired
    assert time.monotonic() - killed_at >= 2


def test_duplicate_messages_run_a_job_once(worker, db, app) -> None:
    with db.session() as session:
        owner = keys.create_key(session, name="duplicates")
        job, _ = job_store.create_job(
            session, owner_id=owner.id, kind="dice", params={"dice": 3, "faces": 6}, time_limit=60
        )
        sent_ahead(session, job.id)  # only the three messages below: no fourth from the dispatcher
    celery = zolve(app).celery
    for _ in range(3):
        enqueue(celery, str(job.id))
    wait_until(lambda: job_row(db, str(job.id)).state == "succeeded", 30, what="the job")
    dropped = f"job {job.id}: nothing to claim"
    wait_until(lambda: worker.log_count(dropped) == 2, 30, what="both duplicates delivered and dropped")
    assert job_row(db, str(job.id)).attempts == 1


def test_submit_while_the_broker_is_down_still_runs_later(make_app, client, auth, worker, db) -> None:
    broken = make_app(redis_url="redis://127.0.0.1:1/0")
    started = time.monotonic()
    response = broken.test_client().post(
        "/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 6}}, headers=auth
    )
    assert response.status_code == 202
    assert time.monotonic() - started < 5, "a down broker must not stall the request"
    job_id = response.get_json()["id"]
    assert job_row(db, job_id).enqueued_at is None
    # the real worker's sweeper finds it and publishes it on the working broker
    wait_until(lambda: job_row(db, job_id).state == "succeeded", 30, what="the sweeper to run it")


def test_recycled_pool_processes_keep_serving_jobs(client, auth, worker, wait_job) -> None:
    """Children are replaced every 10 jobs here; a fork while the parent held a lock once hung them."""
    ids = [
        client.post(
            "/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 4}}, headers=auth
        ).get_json()["id"]
        for _ in range(24)
    ]
    assert [wait_job(auth, job_id, timeout=60)["state"] for job_id in ids] == ["succeeded"] * 24


def test_a_poison_job_fails_after_max_attempts_and_the_worker_lives_on(
    client, auth, worker, settings, wait_job
) -> None:
    job = client.post("/jobs", json={"kind": "test.crash", "params": {}}, headers=auth).get_json()
    final = wait_job(auth, job["id"], timeout=90)
    assert final["state"] == "failed", final
    assert final["attempts"] == settings.max_attempts
    assert final["error"]["type"] == "WorkerLost" and "giving up" in final["error"]["message"]
    after = wait_job(auth, client.post("/jobs", json=DICE_QUICK, headers=auth).get_json()["id"])
    assert after["state"] == "succeeded"  # the pool replaced its dead processes and serves on


def test_a_sharded_jobs_time_limit_counts_the_solve_time_of_all_its_shards(
    client, auth, worker, wait_job
) -> None:
    """Four one-second shards: within a 10 s time_limit the job succeeds; with 2.5 s it fails once its
    shards have used the 2.5 s between them (each shard alone would fit)."""
    params = {"keys": ["a", "b", "c", "d"], "shard_seconds": 1.0}
    ids = {
        limit: client.post(
            "/jobs", json={"kind": "test.sharded", "params": params, "time_limit": limit}, headers=auth
        ).get_json()["id"]
        for limit in (10, 2.5)
    }
    assert wait_job(auth, ids[10], 60)["state"] == "succeeded"
    over = wait_job(auth, ids[2.5], 60)
    assert over["state"] == "failed" and over["error"]["type"] == "TimeLimitExceeded", over

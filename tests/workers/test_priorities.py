"""Priorities and queue timeouts on real worker processes: a key whose one place in flight is taken by a
long job starts its waiting work highest priority first, and a job not started within its queue_timeout
ends `expired` without running."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from store import events
from store import keys as key_store
from tests.support import wait_until

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 4}, "fresh": True}


def test_waiting_work_starts_by_priority_and_a_job_past_its_queue_timeout_never_runs(
    client, db, worker, wait_job, tmp_path: Path
) -> None:
    with db.session() as session:
        key = key_store.create_key(session, name="one place", max_in_flight=1).key
    headers = {"Authorization": f"Bearer {key}"}
    release = tmp_path / "release"
    long_job = {"kind": "test.hold", "params": {"release": str(release), "seconds": 30}}
    running = client.post("/jobs", json=long_job, headers=headers).get_json()["id"]
    wait_until(lambda: client.get(f"/jobs/{running}", headers=headers).get_json()["state"] == "running", 30)

    def submit(**extra: object) -> str:
        answer = client.post("/jobs", json={**DICE, **extra}, headers=headers)
        assert answer.status_code == 202, answer.get_json()
        return answer.get_json()["id"]

    low = submit(priority=-10, params={"dice": 3, "faces": 5})
    timed = submit(queue_timeout=2, params={"dice": 3, "faces": 6})
    high = submit(priority=50, params={"dice": 3, "faces": 7})
    expired = wait_job(headers, timed, 30)
    assert expired["state"] == "expired" and expired["started_at"] is None, expired
    assert expired["error"]["type"] == "QueueTimeout" and expired["queue_timeout"] == 2
    assert client.get(f"/jobs/{low}", headers=headers).get_json()["state"] == "queued"

    release.touch()
    finished = {job_id: wait_job(headers, job_id, 60) for job_id in (running, high, low)}
    assert {job["state"] for job in finished.values()} == {"succeeded"}
    started = {job_id: datetime.fromisoformat(job["started_at"]) for job_id, job in finished.items()}
    assert started[high] < started[low], "the priority-50 job started before the earlier priority -10 one"
    assert finished[high]["priority"] == 50 and finished[low]["priority"] == -10
    with db.session() as session:
        names = [event.event for event in events.history(session, timed)]
    assert names == ["created", "expired"]

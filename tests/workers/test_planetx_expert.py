"""Expert mode through the service: the full enumeration against the combinatorial one, a worker killed
mid-shard, and a cancel across shards. The slowest tests of the suite (a few minutes)."""

import time
import tracemalloc
import uuid

import pytest
from sqlalchemy import func, select

from api.extension import zolve
from puzzles.planetx.board import EMPTY, MODES
from puzzles.planetx.rules import enumerate_boards
from store import rows
from store.models import Job, Shard
from tests.support import shard_states, wait_until
from workers.app import queue_depth

#: sector 1 and sector 18 empty: 85,959 boards, about half a minute of shards
CORNER = [{"sector": 1, "object": "empty"}, {"sector": 18, "object": "empty"}]


def job_row(db, job_id: str) -> Job:
    with db.session() as session:
        return session.get(Job, uuid.UUID(job_id))


def board_count(db, job_id: str) -> int:
    with db.session() as session:
        return len(rows.keys_stored(session, uuid.UUID(job_id)))


@pytest.mark.timeout(1800)
def test_expert_enumeration_matches_the_combinatorial_count_and_set(
    client, auth, worker, db, wait_job
) -> None:
    body = {"kind": "planetx.enumerate", "params": {"mode": "expert"}, "fresh": True}
    job = client.post("/jobs", json=body, headers=auth).get_json()
    expected = sorted(enumerate_boards(MODES["expert"]))  # computed while the workers enumerate
    final = wait_job(auth, job["id"], timeout=1500)
    assert final["state"] == "succeeded", final
    assert final["result"]["count"] == len(expected) == 1_138_272
    with db.session() as session:
        stored = sorted(rows.keys_stored(session, uuid.UUID(job["id"])).tolist())
    assert stored == expected
    assert final["progress"]["shards_done"] == final["progress"]["shards_total"] >= 370  # depth 4
    del stored, expected

    # the CSV export streams every one of the million rows in constant memory
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    response = client.get(f"/jobs/{job['id']}/boards.csv", headers=auth, buffered=False)
    lines = sum(chunk.count(b"\n") for chunk in response.response)
    peak = tracemalloc.get_traced_memory()[1] - baseline
    tracemalloc.stop()
    assert lines == 1_138_272 + 1
    assert peak < 50_000_000, f"export held {peak / 1e6:.0f} MB"


def running_shards(db, job_id: str) -> list[int]:
    with db.session() as session:
        query = select(Shard.id).where(Shard.job_id == uuid.UUID(job_id), Shard.state == "running")
        return list(session.scalars(query))


def test_worker_killed_mid_shard_still_gives_the_exact_count(client, auth, worker, db, wait_job) -> None:
    body = {"kind": "planetx.enumerate", "params": {"mode": "expert", "constraints": CORNER}, "fresh": True}
    job = client.post("/jobs", json=body, headers=auth).get_json()

    def mid_shard() -> bool:
        with db.session() as session:
            running = session.scalar(
                select(func.count()).where(Shard.job_id == uuid.UUID(job["id"]), Shard.state == "running")
            )
        return running > 0 and job_row(db, job["id"]).shards_done > 3

    for _ in range(5):
        wait_until(mid_shard, 60, 0.05, "shards to be under way")
        worker.kill()
        # what the dead worker was running (a shard may have committed between the check and the kill)
        killed = running_shards(db, job["id"])
        worker.start()
        if killed:
            break
    final = wait_job(auth, job["id"], timeout=300)
    expected = enumerate_boards(MODES["expert"], [(1, EMPTY, True), (18, EMPTY, True)])
    assert final["state"] == "succeeded", final
    assert final["result"]["count"] == len(expected) == board_count(db, job["id"])
    assert killed, "no shard was running when the worker was killed"
    with db.session() as session:
        attempts = session.scalars(select(Shard.attempts).where(Shard.id.in_(killed)))
        assert all(attempt > 1 for attempt in attempts), "the killed shards ran again"


def test_cancel_stops_every_shard(client, auth, worker, db, app) -> None:
    body = {"kind": "planetx.enumerate", "params": {"mode": "expert"}, "fresh": True}
    job = client.post("/jobs", json=body, headers=auth).get_json()
    wait_until(lambda: job_row(db, job["id"]).shards_done > 5, 120, 0.1, "shards to finish")
    assert client.post(f"/jobs/{job['id']}/cancel", headers=auth).status_code == 202
    wait_until(lambda: job_row(db, job["id"]).state == "cancelled", 10, 0.1, "the cancel")
    states = shard_states(db, job["id"])
    assert "running" not in states and "queued" not in states and states["cancelled"] > 0
    written = board_count(db, job["id"])
    time.sleep(2)
    assert board_count(db, job["id"]) == written, "boards were written after the cancel"
    # the cancelled shards' messages are no-ops; let the worker drain them before the next test
    celery = zolve(app).celery
    wait_until(lambda: queue_depth(celery) == 0, 180, 0.5, "the no-op messages to drain")

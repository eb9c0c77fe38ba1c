"""Faults on a private stack (its own PostgreSQL, Redis and worker, so restarting them disturbs no other
test): Redis restarted without persistence, Redis down at submit, PostgreSQL restarted mid-run."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from sqlalchemy import func, select

from store import keys
from store.db import Database
from store.migrate import upgrade
from store.models import Board, Job
from tests.support import TEST_ENV, WorkerProcess, poll_job, wait_until
from zolve.config import Settings
from zolve.embedded import EmbeddedServices

SLOW_DICE = {"kind": "dice", "params": {"dice": 3, "faces": 20}, "time_limit": 8}


@dataclass
class Stack:
    services: EmbeddedServices
    settings: Settings
    db: Database
    worker: WorkerProcess
    client: object
    headers: dict[str, str]

    def job(self, job_id: str) -> Job:
        with self.db.session() as session:
            return session.get(Job, uuid.UUID(job_id))

    def restart_redis(self) -> None:
        self.services.stop_redis()
        assert self.services.start_redis() == self.settings.redis_url


@pytest.fixture
def stack(settings: Settings, tmp_path: Path) -> Iterator[Stack]:
    from api import create_app

    services = EmbeddedServices(tmp_path / "data")
    own = replace(settings, database_url=services.start_postgres(), redis_url=services.start_redis())
    upgrade(own.database_url)
    db = Database(own.database_url)
    with db.session() as session:
        key = keys.create_key(session, name="faults").key
    env = {
        **os.environ,
        **TEST_ENV,
        "DATABASE_URL": own.database_url,
        "REDIS_URL": own.redis_url,
    }
    worker = WorkerProcess(env, tmp_path / "worker.log", concurrency=1)
    app = create_app(own)
    yield Stack(services, own, db, worker, app.test_client(), {"Authorization": f"Bearer {key}"})
    worker.stop()
    app.extensions["zolve.db"].dispose()
    db.dispose()
    services.stop()


def test_redis_restarted_without_persistence_while_shards_are_queued(stack: Stack) -> None:
    stack.worker.start()
    body = {"kind": "planetx.enumerate", "params": {"mode": "standard", "shard_depth": 3}, "fresh": True}
    job_id = stack.client.post("/jobs", json=body, headers=stack.headers).get_json()["id"]
    wait_until(lambda: (stack.job(job_id).shards_done or 0) >= 2, 60, what="a few shards to finish")
    stack.worker.kill()
    assert stack.job(job_id).shards_done < stack.job(job_id).shards_total, "shards must still be queued"
    stack.restart_redis()  # every queued wake-up message is gone
    stack.worker.start()
    final = poll_job(stack.client, stack.headers, job_id, 120)
    assert final["state"] == "succeeded", final
    assert final["result"]["count"] == 4446
    with stack.db.session() as session:
        rows = session.scalar(
            select(func.count()).select_from(Board).where(Board.job_id == uuid.UUID(job_id))
        )
        distinct = session.scalar(
            select(func.count(func.distinct(Board.code))).where(Board.job_id == uuid.UUID(job_id))
        )
    assert rows == distinct == 4446


def test_redis_down_at_submit_then_back(stack: Stack) -> None:
    stack.worker.start()
    stack.services.stop_redis()
    started = time.monotonic()
    response = stack.client.post(
        "/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 4}}, headers=stack.headers
    )
    assert response.status_code == 202 and time.monotonic() - started < 5
    assert stack.services.start_redis() == stack.settings.redis_url
    final = poll_job(stack.client, stack.headers, response.get_json()["id"], 60)
    assert final["state"] == "succeeded", final


def test_postgres_restarted_mid_run(stack: Stack) -> None:
    stack.worker.start()
    job_id = stack.client.post("/jobs", json=SLOW_DICE, headers=stack.headers).get_json()["id"]
    wait_until(lambda: stack.job(job_id).state == "running", 30, what="the job to start")
    stack.services.stop_postgres()
    try:
        down = stack.client.get(f"/jobs/{job_id}", headers=stack.headers)
        assert down.status_code == 503 and down.headers["Retry-After"]
        assert down.get_json()["code"] == 503 and "database" in down.get_json()["message"]
        submit = stack.client.post("/jobs", json=SLOW_DICE, headers=stack.headers)
        assert submit.status_code == 503
        assert stack.client.get("/ready").status_code == 503
        time.sleep(4)  # longer than a lease: heartbeats fail meanwhile
    finally:
        assert stack.services.start_postgres() == stack.settings.database_url
    wait_until(lambda: stack.client.get("/ready").status_code == 200, 30, what="the API to reconnect")
    final = poll_job(stack.client, stack.headers, job_id, 90)
    assert final["state"] == "succeeded", final
    assert final["result"]["status"] == "sat"
    with stack.db.session() as session:
        stuck = session.scalar(
            select(func.count()).where(Job.state == "running", Job.lease_expires_at < func.now())
        )
    assert stuck == 0

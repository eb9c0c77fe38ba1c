"""Solving and sending on separate workers (`zolve worker --queues`, as docker-compose.yml and
deploy/k8s run them): a finished job's webhook is sent while every solver process is busy with another
client's long shards, instead of waiting for one of them to come free."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select

from store import dispatch, heartbeats, keys
from store.models import Shard, Worker
from tests.support import poll_job, private_stack, wait_until, webhook_receiver

SHARD_SECONDS = 6.0


def test_a_webhook_is_sent_while_every_solver_is_busy(settings, tmp_path) -> None:
    with (
        webhook_receiver() as receiver,
        private_stack(settings, tmp_path / "stack") as stack,
        stack.split_workers(tmp_path),
    ):
        # the sender's process runs no job: the dispatch window counts the solver's alone
        wait_until(lambda: solvers_and_senders(stack) == [False, True], 30, 0.1, "both workers' heartbeats")
        with stack.db.session() as session:
            assert dispatch.window(session, alive_within=30) == dispatch.MIN_WINDOW
            other = {"Authorization": f"Bearer {keys.create_key(session, name='bulk').key}"}
        bulk_id = submit(stack, other, long_shards(3))
        wait_until(lambda: running_shards(stack, bulk_id), 30, 0.05, "the bulk job's first shard")
        # a job that waits behind it, cancelled: final at once, with no solver process free
        callback = {"callback_url": f"{receiver.url}/cancelled"}
        waiting = submit(stack, stack.headers, {**long_shards(1), **callback})
        cancelled = stack.client.post(f"/jobs/{waiting}/cancel", headers=stack.headers)
        assert cancelled.status_code in (200, 202), cancelled.get_json()
        job = poll_job(stack.client, stack.headers, waiting, 30)
        assert job["state"] == "cancelled"
        sent = wait_until(lambda: receiver.first("/cancelled"), 30, 0.05, "the webhook").at
        assert running_shards(stack, bulk_id, at=sent), "the solver process was busy when it was sent"


def solvers_and_senders(stack) -> list[bool]:
    """Each live worker process: whether it runs jobs and shards."""
    with stack.db.session() as session:
        return sorted(session.scalars(select(Worker.solves).where(heartbeats.alive(30))))


def long_shards(count: int) -> dict:
    keys_ = [f"k{n}" for n in range(count)]
    return {"kind": "test.sharded", "params": {"keys": keys_, "shard_seconds": SHARD_SECONDS}, "fresh": True}


def submit(stack, headers: dict[str, str], body: dict) -> str:
    answer = stack.client.post("/jobs", json=body, headers=headers)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()["id"]


def running_shards(stack, job_id: str, at: datetime | None = None) -> list[str]:
    """The job's shards running now, or at a moment past (started by then, not finished by then)."""
    with stack.db.session() as session:
        shards = session.scalars(select(Shard).where(Shard.job_id == uuid.UUID(job_id))).all()
    if at is None:
        return [s.key for s in shards if s.state == "running"]
    return [
        s.key
        for s in shards
        if s.started_at is not None and s.started_at <= at and (s.finished_at is None or s.finished_at > at)
    ]

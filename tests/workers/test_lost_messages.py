"""Messages the broker never took, and finalizes that go wrong, must not strand a sharded job: the rows
say what is unsent and the sweeper sends it at once (not only once the queue is empty), a finalize is
capped, and a cancel that lands while a plan is being made ends the job cancelled."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.config import Settings
from store.models import Job, JobEvent, Shard
from tests.support import PrivateStack, poll_job, private_stack, wait_until

# lost (sent but dropped) messages are re-sent only after this long: the unsent path must not need it
NEVER_REQUEUE = {"ZOLVE_REQUEUE_AFTER": "600"}


@pytest.fixture
def stack(settings: Settings, tmp_path: Path) -> Iterator[PrivateStack]:
    with private_stack(settings, tmp_path / "data", concurrency=2, env=NEVER_REQUEUE) as own:
        own.worker.start()
        yield own


def _broker_back(stack: PrivateStack) -> None:
    assert stack.worker.process.poll() is None, "the worker must outlive its broker (workers.broker_fixes)"
    assert stack.services.start_redis() == stack.settings.redis_url


def _shard(stack: PrivateStack, job_id: str, key: str):
    return next((shard for shard in stack.shards(job_id) if shard.key == key), None)


def _running(stack: PrivateStack, job_id: str, *keys: str) -> bool:
    shards = [_shard(stack, job_id, key) for key in keys]
    return all(shard is not None and shard.state == "running" for shard in shards)


def test_messages_refused_after_planning_a_split_and_the_last_shard_are_sent_when_redis_is_back(
    stack: PrivateStack,
) -> None:
    params = {"plan_seconds": 2, "keys": ["root"], "split": {"root": ["a", "b"]}, "shard_seconds": 2}
    job_id = stack.client.post(
        "/jobs", json={"kind": "test.sharded", "params": params}, headers=stack.headers
    ).get_json()["id"]

    # 1. the broker goes away while the plan is made: the shard it stores is marked unsent
    wait_until(lambda: stack.job(job_id).state == "running", 30, what="planning to start")
    stack.services.stop_redis()
    wait_until(lambda: _shard(stack, job_id, "root"), 30, what="the plan to be stored")
    wait_until(lambda: _shard(stack, job_id, "root").enqueued_at is None, 10, what="root marked unsent")
    _broker_back(stack)

    # 2. ... while a shard splits: the worker goes on with the first new shard itself (a chain: no
    # message), and the other one, released at once for the idle process, is marked unsent
    wait_until(lambda: _running(stack, job_id, "root"), 30, what="the root shard to run")
    stack.services.stop_redis()
    wait_until(lambda: _shard(stack, job_id, "b"), 30, what="the split to be stored")
    wait_until(lambda: _running(stack, job_id, "a"), 10, what="a chained")
    wait_until(lambda: _shard(stack, job_id, "b").enqueued_at is None, 10, what="b unsent")
    _broker_back(stack)

    # 3. ... while the last shards run: the finalize message is marked unsent
    wait_until(lambda: _running(stack, job_id, "a", "b"), 30, what="both shards to run")
    stack.services.stop_redis()
    wait_until(lambda: stack.job(job_id).shards_done == 3, 30, what="every shard to finish")
    wait_until(lambda: stack.job(job_id).finalize_enqueued_at is None, 10, what="finalize unsent")
    _broker_back(stack)

    final = poll_job(stack.client, stack.headers, job_id, 30)
    assert final["state"] == "succeeded", final
    assert final["result"] == {"count": 2, "keys": ["a", "b"]}


def test_a_cancel_that_lands_while_the_plan_is_made_ends_the_job_cancelled(
    client, make_key, worker, wait_job, db
) -> None:
    headers = make_key()
    body = {"kind": "test.sharded", "params": {"plan_seconds": 2, "keys": ["a", "b"]}}
    job_id = client.post("/jobs", json=body, headers=headers).get_json()["id"]
    wait_until(
        lambda: client.get(f"/jobs/{job_id}", headers=headers).get_json()["state"] == "running",
        30,
        what="planning to start",
    )
    assert client.post(f"/jobs/{job_id}/cancel", headers=headers).get_json()["state"] == "cancelling"
    final = wait_job(headers, job_id, 30)
    assert final["state"] == "cancelled", final
    assert final.get("error") is None
    with db.session() as session:
        history = session.scalars(
            select(JobEvent.event).where(JobEvent.job_id == uuid.UUID(job_id)).order_by(JobEvent.id)
        )
        assert list(history)[-1] == "cancelled"
        assert session.scalar(select(func.count()).where(Shard.job_id == uuid.UUID(job_id))) == 0


def test_a_finalize_that_cannot_store_its_result_fails_the_job(client, make_key, worker, wait_job) -> None:
    headers = make_key()
    body = {"kind": "test.sharded", "params": {"keys": ["a", "b"], "finalize": "unstorable"}}
    job_id = client.post("/jobs", json=body, headers=headers).get_json()["id"]
    final = wait_job(headers, job_id, 60)
    assert final["state"] == "failed", final
    assert final["error"]["message"].startswith("finalize:"), final["error"]


def test_a_finalize_that_keeps_killing_its_process_fails_the_job_after_max_attempts(
    client, make_key, worker, wait_job, db
) -> None:
    headers = make_key()
    body = {"kind": "test.sharded", "params": {"keys": ["a"], "finalize": "crash"}}
    job_id = client.post("/jobs", json=body, headers=headers).get_json()["id"]
    final = wait_job(headers, job_id, 90)
    assert final["state"] == "failed", final
    assert final["error"]["type"] == "FinalizeFailed", final["error"]
    with db.session() as session:
        # max_attempts (3 in the tests) runs, then the one that gives up
        assert session.get(Job, uuid.UUID(job_id)).finalize_attempts >= 4


def _delete_message(redis_url: str, target: str) -> int:
    """Drop the waiting message that names `target` from the broker's queue, as a lost message would."""
    from kombu import Connection

    with Connection(redis_url) as connection:
        client = connection.default_channel.client
        gone = 0
        for raw in client.lrange("zolve", 0, -1):
            if target in raw.decode():
                gone += client.lrem("zolve", 1, raw)
        return gone


def test_a_message_lost_while_the_queue_is_busy_is_sent_again(settings: Settings, tmp_path: Path) -> None:
    """Loss is judged per row (sent long ago, not claimed since), not only once the queue is empty: here
    one pool process runs a 30 s shard while five jobs wait in the broker's queue. The five are sent again
    too (the rows cannot tell a lost message from one waiting in line); their duplicates do nothing."""
    env = {"ZOLVE_MAX_IN_FLIGHT_PER_KEY": "8"}  # every job below is sent at once; ZOLVE_REQUEUE_AFTER: 10
    with private_stack(settings, tmp_path / "data", concurrency=1, env=env) as stack:
        with _busy(stack) as slow:
            waiting = [_submit(stack, "dice", {"dice": 3, "faces": faces}) for faces in range(3, 9)]
            wait_until(lambda: all(stack.job(j).enqueued_at for j in waiting), 10, what="the jobs to be sent")
            victim = waiting[0]
            sent_at = stack.job(victim).enqueued_at
            assert _delete_message(stack.settings.redis_url, victim) == 1
            wait_until(lambda: stack.job(victim).enqueued_at > sent_at, 25, what="the lost message re-sent")
            assert _running(stack, slow, "a"), "the queue was busy all along"
            assert all(stack.job(j).state == "queued" for j in waiting[1:])
        for job_id in waiting:
            assert poll_job(stack.client, stack.headers, job_id, 30)["state"] == "succeeded"


def _submit(stack: PrivateStack, kind: str, params: dict) -> str:
    answer = stack.client.post("/jobs", json={"kind": kind, "params": params}, headers=stack.headers)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()["id"]


@contextmanager
def _busy(stack: PrivateStack) -> Iterator[str]:
    """Start the stack's worker and keep its only pool process on a 30 s shard (cancelled on the way out),
    so what is submitted meanwhile waits in the broker; yields the slow job's id."""
    stack.worker.start()
    slow = _submit(stack, "test.sharded", {"shard_seconds": 30})
    wait_until(lambda: _running(stack, slow, "a"), 30, what="the slow shard to run")
    try:
        yield slow
    finally:
        stack.client.post(f"/jobs/{slow}/cancel", headers=stack.headers)


def _take_as_a_worker_that_died(redis_url: str, target: str, taken_ago: float) -> int:
    """Move the waiting message that names `target` into kombu's unacknowledged set, delivered `taken_ago`
    seconds ago: what a worker leaves behind when it is killed after taking a message and before
    starting it (kombu's QoS.append, then no ack and no restore until the visibility timeout)."""
    import json
    import time

    from kombu import Connection

    with Connection(redis_url) as connection:
        channel = connection.default_channel
        client, moved = channel.client, 0
        for raw in client.lrange("zolve", 0, -1):
            if target in raw.decode() and client.lrem("zolve", 1, raw):
                tag = f"dead-{target}"
                client.hset(channel.unacked_key, tag, json.dumps([json.loads(raw), "", "zolve"]))
                client.zadd(channel.unacked_index_key, {tag: time.time() - taken_ago})
                moved += 1
        return moved


def test_a_message_taken_by_a_worker_that_died_before_starting_it_is_sent_again(
    settings: Settings, tmp_path: Path
) -> None:
    """A message a worker took long ago (longer than ZOLVE_REQUEUE_AFTER, 10 s here) while its row is still
    queued: the row is sent again instead of waiting for the broker's visibility timeout (over an hour).
    Seen in `make test-image` with a worker container SIGKILLed mid-enumeration.
    The only pool process runs a 30 s shard meanwhile, so the job's message waits in the broker."""
    with private_stack(settings, tmp_path / "data", concurrency=1) as stack:
        with _busy(stack) as slow:
            job_id = _submit(stack, "dice", {"dice": 3, "faces": 6})
            wait_until(lambda: stack.job(job_id).enqueued_at, 10, what="the job to be sent")
            sent_at = stack.job(job_id).enqueued_at
            assert _take_as_a_worker_that_died(stack.settings.redis_url, job_id, taken_ago=60) == 1
            wait_until(lambda: stack.job(job_id).enqueued_at > sent_at, 25, what="the taken message re-sent")
            assert _running(stack, slow, "a"), "the only process was busy all along"
        assert poll_job(stack.client, stack.headers, job_id, 30)["state"] == "succeeded"

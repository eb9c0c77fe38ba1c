"""Recovery in seconds, on private stacks (their own PostgreSQL, Redis and workers): a broker that lost
its messages, a pool process killed mid-shard, and two workers sharing one host.

Each stack's settings make the slow paths useless (a lost message would be re-sent only after 10 minutes,
a lease runs out only after a minute), so these pass only through the fast ones."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import Settings
from store import dashboard
from tests.support import PrivateStack, WorkerProcess, poll_job, private_stack, wait_until

SLOW_PATHS_OFF = {"ZOLVE_REQUEUE_AFTER": "600", "ZOLVE_LEASE_SECONDS": "60"}


@pytest.fixture
def stack(settings: Settings, tmp_path: Path) -> Iterator[PrivateStack]:
    with private_stack(settings, tmp_path / "data", env=SLOW_PATHS_OFF) as own:
        yield own


def submit_sharded(stack: PrivateStack, shards: int, seconds: float) -> str:
    keys = [f"s{n:02d}" for n in range(shards)]
    body = {"kind": "test.sharded", "params": {"keys": keys, "shard_seconds": seconds}}
    response = stack.client.post("/jobs", json=body, headers=stack.headers)
    assert response.status_code == 202, response.get_json()
    return response.get_json()["id"]


def test_redis_restarted_under_a_backlog_every_queued_job_and_shard_runs_again_within_seconds(
    stack: PrivateStack,
) -> None:
    stack.worker.start()
    sharded = submit_sharded(stack, shards=12, seconds=0.3)
    small = [
        stack.client.post(
            "/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 4 + n}}, headers=stack.headers
        ).get_json()["id"]
        for n in range(6)
    ]
    wait_until(lambda: (stack.job(sharded).shards_done or 0) >= 2, 60, what="a few shards to finish")
    logged_before = len(stack.worker.log_path.read_bytes())
    stack.restart_redis()  # every message the broker held is gone; the worker stays up
    back = time.monotonic()
    for job_id in [sharded, *small]:
        final = poll_job(stack.client, stack.headers, job_id, 60)
        assert final["state"] == "succeeded", final
    assert time.monotonic() - back < 60, "well before the 600 s requeue_after"
    assert b"the broker lost its messages" in stack.worker.log_path.read_bytes()[logged_before:]


@pytest.fixture
def roomy_stack(settings: Settings, tmp_path: Path) -> Iterator[PrivateStack]:
    """One pool process, and a window of 3 shards: two fresh shards wait in the broker beside the one
    running."""
    env = {**SLOW_PATHS_OFF, "ZOLVE_MAX_IN_FLIGHT_PER_KEY": "3"}
    with private_stack(settings, tmp_path / "data", env=env) as own:
        yield own


def test_a_shard_whose_process_was_killed_reruns_before_the_rest_of_the_backlog(
    roomy_stack: PrivateStack,
) -> None:
    stack = roomy_stack
    stack.worker.start()
    job_id = submit_sharded(stack, shards=10, seconds=3)

    def running_with_two_waiting():
        now = stack.shards(job_id)
        running = [s for s in now if s.state == "running"]
        waiting = [s for s in now if s.state == "queued" and s.enqueued_at is not None]
        return (running[0], waiting) if len(running) == 1 and len(waiting) == 2 else None

    running, waiting = wait_until(running_with_two_waiting, 60, what="a shard running, two waiting")
    never_sent = {s.id for s in stack.shards(job_id) if s.state == "queued" and s.enqueued_at is None}
    killed_at = time.monotonic()
    os.kill(int(running.lease_owner.split(":")[1]), signal.SIGKILL)

    rerun = wait_until(
        lambda: next((s for s in stack.shards(job_id) if s.id == running.id and s.attempts == 2), None),
        30,
        what="the killed shard to run again",
    )
    assert time.monotonic() - killed_at < 20, "its lease (60 s) did not have to run out"
    final = poll_job(stack.client, stack.headers, job_id, 90)
    assert final["state"] == "succeeded", final
    starts = {s.id: s.started_at for s in stack.shards(job_id)}
    assert never_sent, "a backlog was held when the process died"
    assert all(rerun.started_at < starts[shard_id] for shard_id in never_sent), "it went first"
    # the new pool process took one of the waiting shards at once; the retry (priority 3) then went
    # ahead of the other one (priority 6), which had been waiting in the broker longer
    waited_longer = sorted(starts[s.id] for s in waiting)[-1]
    assert rerun.started_at < waited_longer, "the retry outranked a fresh shard sent before it"


def test_two_workers_on_one_host_are_both_listed_and_both_beat_while_they_run_shards(
    stack: PrivateStack,
) -> None:
    second = WorkerProcess(stack.worker.env, stack.worker.log_path.with_name("second.log"), concurrency=1)
    stack.worker.start()
    second.start()
    try:
        job_id = submit_sharded(stack, shards=12, seconds=1.0)
        owners: set[str] = set()

        def both_ran_shards() -> bool:
            owners.update(s.lease_owner for s in stack.shards(job_id) if s.lease_owner)
            return len({owner.split(":")[2] for owner in owners}) == 2

        wait_until(both_ran_shards, 60, what="both workers to run shards")
        first_look = alive(stack)
        running = {s.lease_owner for s in stack.shards(job_id) if s.state == "running"}
        assert len({w.node for w in first_look.values()}) == 2, "two Celery nodes, one per worker"
        assert running <= set(first_look), "every process running a shard is listed"

        def all_beat_again() -> bool:
            later = alive(stack)
            return all(later[name].heartbeat_at > status.heartbeat_at for name, status in first_look.items())

        wait_until(all_beat_again, 30, 0.2, "every listed process to beat again")
        assert poll_job(stack.client, stack.headers, job_id, 90)["state"] == "succeeded"
    finally:
        second.stop()
    logs = stack.worker.log_path.read_bytes() + second.log_path.read_bytes()
    assert b"Deadlock" not in logs and b"heartbeat failed" not in logs


def alive(stack: PrivateStack) -> dict[str, dashboard.WorkerStatus]:
    with stack.db.session() as session:
        return {w.name: w for w in dashboard.workers_alive(session, within=5)}

"""Short jobs are never stuck behind long ones (issue 37, item 2). The probe's two `dice` jobs of 10 dice
and 20 faces from one key held both solver processes for their whole time limit, and another key's
0.2-s job queued 50-60 s. A job that asks for at most ZOLVE_SHORT_JOB_SECONDS (10 by default) now
travels on a queue of its own, which a worker of its own takes alone (`zolve up --short-lane`), so no
long job can hold it: the short job runs while every solver process is still busy."""

from __future__ import annotations

import base64
import json
import uuid

from core.config import replace
from services.messages import QUEUE, SHORT_QUEUE
from tests.security.helpers import key_in
from tests.support import poll_job, private_stack, wait_until
from workers.app import make_celery

#: the probe's long job: searches until its time limit (measured: 60 s of 60)
LONG = {"kind": "dice", "params": {"dice": 10, "faces": 20}, "time_limit": 120, "fresh": True}
SHORT = {"kind": "dice", "params": {"dice": 3, "faces": 6}, "time_limit": 5, "fresh": True}


def test_a_short_job_runs_while_another_clients_long_jobs_hold_every_solver(settings, tmp_path) -> None:
    with (
        private_stack(settings, tmp_path / "stack", concurrency=1) as stack,
        stack.split_workers(tmp_path, short_lane=1),
    ):
        long_jobs = [_submit(stack, stack.headers, LONG) for _ in range(2)]
        wait_until(lambda: _state(stack, long_jobs[0]) == "running", 60, 0.1, "a long job to hold the solver")
        other = key_in(stack.db)
        try:
            for _ in range(3):
                short = _submit(stack, other, SHORT)
                assert poll_job(stack.client, other, short, 30)["state"] == "succeeded"
                # it did not wait for the long jobs: the solver process still runs the first, and the
                # second still waits for it (the short lane never takes a long job)
                assert [_state(stack, job) for job in long_jobs] == ["running", "queued"]
        finally:
            for job in long_jobs:
                stack.client.post(f"/jobs/{job}/cancel", headers=stack.headers)
        for job in long_jobs:
            assert poll_job(stack.client, stack.headers, job, 60)["state"] == "cancelled"


def test_jobs_travel_on_the_lane_their_time_limit_asks_for(settings, tmp_path) -> None:
    """With no worker started, the messages stay in the broker where they were published (all four at
    once: a window of 4 in flight)."""
    with private_stack(replace(settings, max_in_flight_per_key=4), tmp_path / "stack") as stack:
        short = _submit(stack, stack.headers, SHORT)
        at_the_threshold = _submit(stack, stack.headers, {**SHORT, "time_limit": settings.short_job_seconds})
        over_it = _submit(stack, stack.headers, {**SHORT, "time_limit": settings.short_job_seconds + 0.5})
        default = _submit(stack, stack.headers, {**SHORT, "time_limit": None})
        queued = _messages(stack)
        assert queued[SHORT_QUEUE] == {short, at_the_threshold}
        assert queued[QUEUE] == {over_it, default}


def _submit(stack, headers: dict[str, str], body: dict) -> str:
    body = {key: value for key, value in body.items() if value is not None}
    answer = stack.client.post("/jobs", json=body, headers=headers)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()["id"]


def _state(stack, job_id: str) -> str:
    return stack.client.get(f"/jobs/{job_id}", headers=stack.headers).get_json()["state"]


def _first_argument(raw: bytes) -> str:
    """A Celery (protocol 2) message's first argument: its job id."""
    payload = json.loads(raw)
    body = payload["body"]
    if payload.get("properties", {}).get("body_encoding") == "base64":
        body = base64.b64decode(body)
    return str(json.loads(body)[0][0])


def _messages(stack) -> dict[str, set[str]]:
    """The job ids of the wake-up messages waiting in each solver queue of the stack's broker (read the way
    kombu's Redis transport lays them out: the test looks at the broker; the service never does)."""
    celery = make_celery(stack.settings)
    found: dict[str, set[str]] = {}
    with celery.connection_for_write() as connection:
        channel = connection.default_channel
        for queue in (QUEUE, SHORT_QUEUE):
            raw = [
                item
                for priority in channel.priority_steps
                for item in channel.client.lrange(channel._q_for_pri(queue, priority), 0, -1)
            ]
            found[queue] = {_first_argument(item) for item in raw}
    assert all(uuid.UUID(job) for ids in found.values() for job in ids)
    return found

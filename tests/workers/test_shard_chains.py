"""A worker that finishes a shard takes its job's next held shard straight from the table (a chain),
unless interactive work or another client's shard was sent and waits (tests/store/test_shards.py tries each
case on the rows): real PostgreSQL, Redis and worker process of their own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import Settings, replace
from store import keys
from tests.support import PrivateStack, poll_job, private_stack, wait_until

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


def bulk(shards: int, seconds: float) -> dict:
    keys = [f"k{n:02}" for n in range(shards)]
    return {"kind": "test.sharded", "params": {"keys": keys, "shard_seconds": seconds}}


@pytest.fixture
def stack(settings: Settings, tmp_path: Path) -> Iterator[PrivateStack]:
    with private_stack(settings, tmp_path / "data", concurrency=1) as own:
        yield own


def test_a_worker_chains_its_jobs_shards_and_yields_to_an_interactive_job(stack: PrivateStack) -> None:
    stack.worker.start()
    chained = stack.client.post("/jobs", json=bulk(6, 0.1), headers=stack.headers).get_json()["id"]
    assert poll_job(stack.client, stack.headers, chained, 60)["state"] == "succeeded"
    shards = stack.shards(chained)
    # one process: a window of two messages; the rest were taken by the chain, claimed as they ran
    taken_by_chain = [s for s in shards if s.enqueued_at == s.started_at]
    assert len(taken_by_chain) >= 3, [(s.key, s.enqueued_at, s.started_at) for s in shards]
    assert len({s.key for s in shards}) == 6 and all(s.state == "succeeded" for s in shards)

    long = stack.client.post("/jobs", json=bulk(12, 0.6), headers=stack.headers).get_json()["id"]
    # its chain has begun: a shard of it is done, and the process went on with the next
    wait_until(lambda: any(s.state == "succeeded" for s in stack.shards(long)), 30, what="a shard done")
    short = stack.client.post("/jobs", json=DICE, headers=stack.headers).get_json()["id"]
    assert poll_job(stack.client, stack.headers, short, 30)["state"] == "succeeded"
    dice = stack.job(short)
    # the chain ends at the shard it was in when the job came (or the one it had just claimed)
    shards_before_dice = [
        s
        for s in stack.shards(long)
        if s.started_at is not None and dice.created_at < s.started_at < dice.started_at
    ]
    assert len(shards_before_dice) <= 1, [(s.key, s.started_at) for s in shards_before_dice]
    assert poll_job(stack.client, stack.headers, long, 60)["state"] == "succeeded"


def test_a_chain_gives_way_to_another_clients_waiting_shards(settings: Settings, tmp_path: Path) -> None:
    # a window of five: each client has five shards sent at once, the first client's ahead in the queue
    wide = replace(settings, max_in_flight_per_key=5)
    env = {"ZOLVE_MAX_IN_FLIGHT_PER_KEY": "5"}
    with private_stack(wide, tmp_path / "data", concurrency=2, env=env) as stack:
        with stack.db.session() as session:
            second = {"Authorization": f"Bearer {keys.create_key(session, name='second').key}"}
        stack.worker.start()
        ids = [
            stack.client.post("/jobs", json=bulk(8, 0.5), headers=headers).get_json()["id"]
            for headers in (stack.headers, second)
        ]
        for headers, job_id in zip((stack.headers, second), ids, strict=True):
            assert poll_job(stack.client, headers, job_id, 60)["state"] == "succeeded"
        first_finished = stack.job(ids[0]).finished_at
        second_done_before = [s.key for s in stack.shards(ids[1]) if s.finished_at < first_finished]
        # chained, the first client's three held shards would run before the second client's five sent
        assert len(second_done_before) >= 3, second_done_before

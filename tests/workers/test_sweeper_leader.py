"""One sweeper at a time (store.leader): of two worker nodes on one database, one holds the sweep
leader's advisory lock; when it dies, the other takes over within a few sweeps, and work goes on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from core.config import Settings
from tests.support import PrivateStack, WorkerProcess, poll_job, private_stack, wait_until

#: "zolvsw", as a bigint advisory lock key shows in pg_locks: the high and low 32 bits
LEADER_KEY = 0x7A6F_6C76_7377


@pytest.fixture
def stack(settings: Settings, tmp_path: Path) -> Iterator[PrivateStack]:
    with private_stack(settings, tmp_path / "data", concurrency=1) as own:
        yield own


def leaders(stack: PrivateStack) -> list[int]:
    """The server processes (pids) whose sessions hold the sweep leader's lock."""
    with stack.db.session() as session:
        rows = session.scalars(
            text(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND classid = :high AND objid = :low AND objsubid = 1"
            ),
            {"high": LEADER_KEY >> 32, "low": LEADER_KEY & 0xFFFF_FFFF},
        )
        return list(rows)


def test_one_worker_node_sweeps_and_another_takes_over_when_it_dies(stack: PrivateStack, tmp_path) -> None:
    stack.worker.start()
    (first,) = wait_until(lambda: leaders(stack), 20, 0.1, "a sweep leader")
    second = WorkerProcess(stack.worker.env, tmp_path / "second.log", concurrency=1).start()
    try:
        assert leaders(stack) == [first], "the second node does not lead while the first lives"
        stack.worker.kill()
        (taken,) = wait_until(lambda: [p for p in leaders(stack) if p != first], 20, 0.1, "a new leader")
        assert leaders(stack) == [taken]
        job = stack.client.post(
            "/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 4}}, headers=stack.headers
        )
        assert poll_job(stack.client, stack.headers, job.get_json()["id"], 30)["state"] == "succeeded"
    finally:
        second.stop()

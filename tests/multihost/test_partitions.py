"""A worker host cut off from PostgreSQL, and one cut off from Redis, while it runs a shard: the network
between the hosts is partitioned (a blackhole route on the worker's host), nothing is stopped."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from store.models import Worker
from tests.multihost.cluster import Cluster, owner_host, time_since
from tests.support import TEST_ENV, wait_until

pytestmark = pytest.mark.integration  # servers of its own, on hosts of its own (tests/multihost)

LEASE = float(TEST_ENV["ZOLVE_LEASE_SECONDS"])


def sharded(keys: int, seconds: float, name: str) -> dict:
    return {
        "kind": "test.sharded",
        "params": {"keys": [f"{name}{n}" for n in range(keys)], "shard_seconds": seconds},
    }


def running_shard(cluster: Cluster, job_id: str, shard_id: int | None = None):
    return next(
        (
            shard
            for shard in cluster.shards(job_id)
            if shard.state == "running" and (shard_id is None or shard.id == shard_id)
        ),
        None,
    )


def last_beat(cluster: Cluster, hostname: str):
    with cluster.db.session() as session:
        return session.scalar(select(func.max(Worker.heartbeat_at)).where(Worker.hostname == hostname))


@pytest.mark.timeout(240)
def test_worker_cut_off_from_postgres_longer_than_its_lease(cluster: Cluster) -> None:
    """Its shard runs again on another host; when the network heals, its late write (the lease heartbeat
    it sent into the partition) reaches PostgreSQL and is refused: it stops and stores nothing."""
    # two long shards (25 s each) on three hosts: one host stays free to take the shard over at once
    job_id = cluster.submit(sharded(2, 25, "pg"))
    shard = wait_until(lambda: running_shard(cluster, job_id), 60, what="a shard to run")
    victim = cluster.host(owner_host(shard.lease_owner))
    victim_log = cluster.workers[victim.role].log_path

    cluster.cut(victim, cluster.db_host)
    cut, cut_at = time.monotonic(), cluster.now()
    try:
        rerun = wait_until(
            lambda: (
                (s := running_shard(cluster, job_id, shard.id))
                and owner_host(s.lease_owner) != victim.role
                and s
            ),
            30,
            0.1,
            "the shard to run on another host",
        )
        taken_over_after = time_since(cut)
        # the cut outlasts the lease by far, whatever ended it early
        time.sleep(max(0.0, 2 * LEASE - (time.monotonic() - cut)))
        assert last_beat(cluster, victim.role) < cut_at, "the cut-off host reached PostgreSQL"
    finally:
        cluster.heal(victim, cluster.db_host)
    healed, healed_at = time.monotonic(), cluster.now()
    assert rerun.attempts == 2 and owner_host(rerun.lease_owner) != victim.role

    wait_until(
        lambda: b"lease lost, stopping" in victim_log.read_bytes(), 60, 0.2, "the victim to hear it lost"
    )
    refused_after = time_since(healed)
    late = [
        (when, sql, params)
        for when, sql, params in cluster.statements_from(victim, healed_at)
        if sql.startswith("UPDATE shards") and f"'{shard.id}'" in params and f"'{victim.role}:" in params
    ]
    assert late, "the victim's late write never reached PostgreSQL"

    final = cluster.wait_job(job_id, 120)
    assert final.state == "succeeded", final.error
    assert cluster.board_counts(job_id) == (2, 2), "each shard's rows stored once"
    assert final.shards_done == final.shards_total == 2
    [stored] = [s for s in cluster.shards(job_id) if s.id == shard.id]
    assert stored.state == "succeeded" and stored.attempts == 2 and stored.row_count == 1
    # the victim is back: its processes heartbeat again
    wait_until(lambda: last_beat(cluster, victim.role) > healed_at, 30, 0.2, "the victim to beat again")
    print(
        f"\nshard {shard.id} taken over {taken_over_after} s after the cut; cut healed after "
        f"{round(healed - cut, 1)} s; the late write refused {refused_after} s after the heal"
    )


@pytest.mark.timeout(240)
def test_worker_cut_off_from_redis(cluster: Cluster) -> None:
    """The shard it runs is finished and stored by it (PostgreSQL is reachable), the other hosts go on
    meanwhile, and once the network heals it takes work again."""
    job_id = cluster.submit(sharded(9, 3, "redis"))
    shard = wait_until(lambda: running_shard(cluster, job_id), 60, what="a shard to run")
    victim = cluster.host(owner_host(shard.lease_owner))
    done_before = cluster.job(job_id).shards_done

    cluster.cut(victim, cluster.redis_host)
    cut = time.monotonic()
    try:
        stored = wait_until(
            lambda: next(
                (s for s in cluster.shards(job_id) if s.id == shard.id and s.state != "running"), None
            ),
            30,
            0.2,
            "the victim's shard to end",
        )
        assert stored.state == "succeeded" and stored.attempts == 1, "stored by the cut-off host, once"
        stored_after = time_since(cut)
        assert cluster.http.get("/ready").status == 200
        time.sleep(max(0.0, 8 - (time.monotonic() - cut)))  # past the broker socket's 5 s timeout
        others_went_on = cluster.job(job_id).shards_done - done_before - 1
    finally:
        cluster.heal(victim, cluster.redis_host)
    healed = time.monotonic()
    assert others_went_on >= 2, "the other hosts went on during the cut"

    final = cluster.wait_job(job_id, 120)
    assert final.state == "succeeded", final.error
    assert cluster.board_counts(job_id) == (9, 9)

    # it takes work again: its broker connection was never dropped (kombu waits on its socket without a
    # timeout, and what it sent into the partition is delivered when the network heals)
    second = cluster.submit(sharded(9, 2, "again"))
    owners: set[str] = set()

    def victim_ran_one() -> bool:
        owners.update(owner_host(s.lease_owner) for s in cluster.shards(second) if s.lease_owner)
        return victim.role in owners

    wait_until(victim_ran_one, 60, 0.1, "the victim to run a shard again")
    back_after = time_since(healed)
    assert cluster.wait_job(second, 120).state == "succeeded"
    assert cluster.board_counts(second) == (9, 9)
    print(
        f"\nthe cut-off host stored its shard {stored_after} s into the cut; the others finished "
        f"{others_went_on} shards meanwhile; it ran a shard again {back_after} s after the heal"
    )

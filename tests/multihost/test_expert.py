"""The full expert Planet X enumeration across three worker hosts: the exact count, every board once.
Minutes of CPU (about 5 on 2 cores): marked `heavy`, it runs in `make test`; `-m "not heavy"` leaves it
out."""

from __future__ import annotations

import time
import uuid

import pytest
from sqlalchemy import select

from store.models import Shard
from tests.multihost.cluster import FINAL, Cluster, owner_host
from tests.support import wait_until

pytestmark = pytest.mark.integration  # servers of its own, on hosts of its own (tests/multihost)

EXPERT_BOARDS = 1_138_272


@pytest.mark.heavy
@pytest.mark.timeout(1500)
def test_expert_enumeration_across_three_worker_hosts(cluster: Cluster) -> None:
    started = time.monotonic()
    job_id = cluster.submit({"kind": "planetx.enumerate", "params": {"mode": "expert"}, "fresh": True})
    hosts: set[str] = set()

    def finished():
        with cluster.db.session() as session:
            owners = session.scalars(
                select(Shard.lease_owner).where(Shard.job_id == uuid.UUID(job_id), Shard.state == "running")
            )
            hosts.update(owner_host(owner) for owner in owners)
        job = cluster.job(job_id)
        return job.state in FINAL and job

    final = wait_until(finished, 1200, 1.0, "the expert enumeration")
    seconds = round(time.monotonic() - started)
    assert final.state == "succeeded", final.error
    assert final.result["count"] == EXPERT_BOARDS
    assert cluster.board_counts(job_id) == (EXPERT_BOARDS, EXPERT_BOARDS), "every board stored once"
    assert final.shards_done == final.shards_total >= 1299
    assert hosts == {host.role for host in cluster.worker_hosts}, f"shards ran on {sorted(hosts)}"
    rate = EXPERT_BOARDS / seconds
    print(f"\nexpert enumeration on {len(hosts)} worker hosts: {seconds} s, {rate:,.0f} boards/s")

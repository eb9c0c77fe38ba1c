"""The full expert Planet X enumeration on a multi-host deployment (tests/multihost/cluster.py: PostgreSQL,
Redis, the API and N worker hosts, each a network namespace of its own), as a ratio against one worker host
run on the same machine in the same run. It checks what it measures: the exact count, every board stored
once, and that the shards ran on every worker host.

Minutes of CPU per run (about 7 for three hosts on 2 cores), which is why it is a benchmark and not a test;
the fault tests in tests/multihost/ cover the multi-host behaviour with smaller enumerations. Needs root
(network namespaces).

    .venv/bin/python bench/multihost_expert.py [--hosts 1,3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from store.models import Shard  # noqa: E402
from tests.multihost.cluster import FINAL, Cluster, owner_host  # noqa: E402
from tests.support import wait_until  # noqa: E402

EXPERT_BOARDS = 1_138_272


def enumerate_on(worker_hosts: int) -> dict[str, float]:
    """One fresh expert enumeration on a cluster with this many worker hosts: seconds and boards/s."""
    with (
        tempfile.TemporaryDirectory(prefix="zolve-bench-multihost-") as workdir,
        Cluster(Path(workdir), workers=worker_hosts) as cluster,
    ):
        started = time.monotonic()
        body = {"kind": "planetx.enumerate", "params": {"mode": "expert"}, "fresh": True}
        job_id = cluster.submit(body)
        hosts: set[str] = set()

        def finished():
            with cluster.db.session() as session:
                owners = session.scalars(
                    select(Shard.lease_owner).where(
                        Shard.job_id == uuid.UUID(job_id), Shard.state == "running"
                    )
                )
                hosts.update(owner_host(owner) for owner in owners)
            job = cluster.job(job_id)
            return job.state in FINAL and job

        final = wait_until(finished, 3600, 1.0, "the expert enumeration")
        seconds = time.monotonic() - started
        if final.state != "succeeded" or final.result["count"] != EXPERT_BOARDS:
            raise SystemExit(f"{worker_hosts} hosts: {final.state} {final.error or final.result}")
        if cluster.board_counts(job_id) != (EXPERT_BOARDS, EXPERT_BOARDS):
            raise SystemExit(f"{worker_hosts} hosts: boards not stored exactly once")
        expected = {host.role for host in cluster.worker_hosts}
        if hosts != expected:
            raise SystemExit(f"{worker_hosts} hosts: shards ran on {sorted(hosts)}, not {sorted(expected)}")
    return {"seconds": seconds, "rate": EXPERT_BOARDS / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hosts", default="1,3", help="worker host counts to run; the first is the baseline")
    args = parser.parse_args()
    counts = [int(n) for n in args.hosts.split(",")]
    runs = {n: enumerate_on(n) for n in counts}
    baseline = runs[counts[0]]
    print(f"\nexpert enumeration ({EXPERT_BOARDS:,} boards, each stored once), single-process workers")
    print(f"{'worker hosts':>12} {'seconds':>9} {'boards/s':>10} {'vs ' + str(counts[0]) + ' host(s)':>12}")
    for n, run in runs.items():
        ratio = run["rate"] / baseline["rate"]
        print(f"{n:>12} {run['seconds']:>9.0f} {run['rate']:>10,.0f} {ratio:>11.2f}×")


if __name__ == "__main__":
    main()

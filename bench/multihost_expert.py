"""The full expert Planet X enumeration on a multi-host deployment (tests/multihost/cluster.py: PostgreSQL,
Redis, the API and N worker hosts, each a network namespace of its own), as a ratio against one worker host
run on the same machine in the same run: submit → stored, the CSV export read from the client host, and
what a shard costs besides its walk, from the worker hosts' logs (as bench/planetx_enumerate.py splits
it). It checks what it measures: the exact count, every board stored once, every line exported, and
that the shards ran on every worker host.

Minutes of CPU per run (about 7 for three hosts on 2 cores), which is why it is a benchmark and not a test;
the fault tests in tests/multihost/ cover the multi-host behaviour with smaller enumerations. Needs root
(network namespaces).

    .venv/bin/python bench/multihost_expert.py [--hosts 1,3] [--shard-depth 4]
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

from bench.planetx_enumerate import shard_timings, split  # noqa: E402
from store.models import Shard  # noqa: E402
from tests.multihost.cluster import FINAL, Cluster, owner_host  # noqa: E402
from tests.support import wait_until  # noqa: E402

EXPERT_BOARDS = 1_138_272


def enumerate_on(worker_hosts: int, shard_depth: int | None) -> dict[str, float]:
    """One fresh expert enumeration on a cluster with this many worker hosts: seconds stored, seconds
    exported, boards/s, and the worker time per shard by part (ms)."""
    with (
        tempfile.TemporaryDirectory(prefix="zolve-bench-multihost-") as workdir,
        Cluster(Path(workdir), workers=worker_hosts) as cluster,
    ):
        started = time.monotonic()
        params = {"mode": "expert", **({"shard_depth": shard_depth} if shard_depth else {})}
        body = {"kind": "planetx.enumerate", "params": params, "fresh": True}
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

        final = wait_until(finished, 3600, 0.2, "the expert enumeration")
        seconds = time.monotonic() - started
        export = cluster.http.get(f"/jobs/{job_id}/boards.csv", headers=cluster.headers, timeout=600)
        exported = time.monotonic() - started - seconds
        if export.status != 200 or export.text.count("\n") != EXPERT_BOARDS + 1:
            raise SystemExit(f"{worker_hosts} hosts: the export gave {export.status}")
        timings = [t for host in cluster.worker_hosts for t in _timings(Path(workdir), host.role, job_id)]
        if final.state != "succeeded" or final.result["count"] != EXPERT_BOARDS:
            raise SystemExit(f"{worker_hosts} hosts: {final.state} {final.error or final.result}")
        if cluster.board_counts(job_id) != (EXPERT_BOARDS, EXPERT_BOARDS):
            raise SystemExit(f"{worker_hosts} hosts: boards not stored exactly once")
        expected = {host.role for host in cluster.worker_hosts}
        if hosts != expected:
            raise SystemExit(f"{worker_hosts} hosts: shards ran on {sorted(hosts)}, not {sorted(expected)}")
    parts = split(timings)
    per_shard = {f"{name} ms": total / len(timings) * 1000 for name, total in parts.items()}
    return {"seconds": seconds, "export": exported, "rate": EXPERT_BOARDS / seconds, **per_shard}


def _timings(workdir: Path, role: str, job_id: str) -> list[dict]:
    """Every shard timing line of the job in the host's worker logs (a restarted worker logs anew)."""
    return [t for log in sorted(workdir.glob(f"{role}*.log")) for t in shard_timings(log, job_id)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hosts", default="1,3", help="worker host counts to run; the first is the baseline")
    parser.add_argument("--shard-depth", type=int, help="sectors fixed per shard (default: the kind's)")
    args = parser.parse_args()
    counts = [int(n) for n in args.hosts.split(",")]
    runs = {n: enumerate_on(n, args.shard_depth) for n in counts}
    baseline = runs[counts[0]]
    print(f"\nexpert enumeration ({EXPERT_BOARDS:,} boards, each stored once), single-process workers")
    print(
        "| worker hosts | stored | CSV export | submit → exported | speed-up | per shard (ms): walk / store /"
        " dispatch / claim / between | overhead / walk |"
    )
    print("|---|---|---|---|---|---|---|")
    first = baseline["seconds"] + baseline["export"]
    for n, run in runs.items():
        total = run["seconds"] + run["export"]
        overhead = sum(run[f"{part} ms"] for part in ("claim", "store", "dispatch", "between"))
        shares = " / ".join(
            f"{run[f'{part} ms']:.1f}" for part in ("walk", "store", "dispatch", "claim", "between")
        )
        print(
            f"| {n} | {run['seconds']:.1f} s | {run['export']:.1f} s | {total:.1f} s | {first / total:.2f}×"
            f" | {shares} | {overhead / run['walk ms']:.0%} |"
        )


if __name__ == "__main__":
    main()

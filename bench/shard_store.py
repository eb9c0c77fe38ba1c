"""What a shard's store costs the worker and PostgreSQL (issue 52): the expert enumeration's 370 shards
stored one after another as a worker stores them, each transaction ending the shard, storing its block of
boards, counting it on the job and claiming the job's next held shard (`store.shards.complete_shard`
with a chain lease), on one embedded PostgreSQL:

- `planned each time` (the baseline): every statement parsed and planned by PostgreSQL on every run, as
  for all of the service's sessions before;
- `prepared`: the session prepares its statements on the server and its connection keeps them
  (`Database.session(prepared=True)`, as a worker's shard claim and store now run).

The two take turns, `--rounds` times each, on a job of their own each time. Printed: the median wall time
a shard's store takes in the worker, and the CPU the PostgreSQL backend serving it used a shard (psutil),
each with its ratio to the baseline.

    .venv/bin/python bench/shard_store.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil
from sqlalchemy import func, select, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.rows import expert_boards, shards_of  # noqa: E402
from services.schema import migrate  # noqa: E402
from store import jobs, keys, shards  # noqa: E402
from store.db import Database  # noqa: E402
from store.models import Shard  # noqa: E402
from zolve.embedded import EmbeddedServices  # noqa: E402

WORKER = "bench-worker"
LEASE = 600.0
WAYS = {"planned each time": False, "prepared": True}


def backend_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used: the PostgreSQL backend of a connection."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def running_job(db: Database, owner: int, shard_count: int) -> uuid.UUID:
    """A job claimed and planned into `shard_count` held shards, as its planning leaves it."""
    with db.session() as session:
        job, _ = jobs.create_job(
            session, owner_id=owner, kind="planetx.enumerate", params={"mode": "expert"}, time_limit=3600
        )
    with db.session() as session:
        jobs.claim(session, job.id, WORKER, LEASE)
    with db.session() as session:
        shards.create_shards(session, job.id, WORKER, [f"shard-{n}" for n in range(shard_count)])
    return job.id


def store_all(
    db: Database, job_id: uuid.UUID, boards: list[list[int]], prepared: bool
) -> tuple[list[float], float]:
    """Store every shard of the job, each claiming the next; seconds per shard and the backend's CPU
    seconds in all (the pool holds one connection: every transaction runs on the same backend)."""
    with db.session() as session:
        first = session.scalar(select(func.min(Shard.id)).where(Shard.job_id == job_id))
        claimed = shards.claim_shard(session, first, WORKER, LEASE)
        backend = session.scalar(text("SELECT pg_backend_pid()"))
    seconds, number = [], 0
    cpu_before = backend_cpu(backend)
    while claimed is not None:
        began = time.perf_counter()
        with db.session(prepared=prepared) as session:
            shards.commit_without_flush_wait(session)
            codes = boards[number]
            done = shards.complete_shard(
                session, claimed.id, WORKER, codes, {"count": len(codes)}, 0.05, chain_lease=LEASE
            )
        seconds.append(time.perf_counter() - began)
        claimed, number = done.next, number + 1
    if number != len(boards):
        raise RuntimeError(f"stored {number} shards of {len(boards)}")
    cpu = backend_cpu(backend) - cpu_before
    with db.session() as session:  # as its finalize would: a finished job's finalize waits for no one
        shards.finish_sharded_job(session, job_id, {"count": sum(len(codes) for codes in boards)})
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    boards = shards_of(expert_boards())
    with tempfile.TemporaryDirectory(prefix="zolve-shard-store-") as tmp:
        services = EmbeddedServices(Path(tmp))
        url = services.start_postgres()
        try:
            migrate(url)
            db = Database(url, pool_size=1)
            with db.session() as session:
                owner = keys.create_key(session, name="shard store bench").id
            walls: dict[str, list[float]] = {way: [] for way in WAYS}
            cpu: dict[str, list[float]] = {way: [] for way in WAYS}
            for _ in range(args.rounds):
                for way, prepared in WAYS.items():
                    seconds, backend = store_all(db, running_job(db, owner, len(boards)), boards, prepared)
                    walls[way] += seconds
                    cpu[way].append(backend / len(boards))
            db.dispose()
        finally:
            services.stop_postgres()
    print(
        f"{len(boards)} expert shards a job, {sum(map(len, boards)):,} boards;"
        f" {args.rounds} rounds of each way"
    )
    wall_base = statistics.median(walls["planned each time"])
    cpu_base = statistics.median(cpu["planned each time"])
    print(f"{'way':18} {'ms a shard':>10} {'ratio':>6} {'backend CPU ms a shard':>23} {'ratio':>6}")
    for way in WAYS:
        wall, backend = statistics.median(walls[way]), statistics.median(cpu[way])
        print(
            f"{way:18} {wall * 1000:10.2f} {wall / wall_base:5.2f}x {backend * 1000:23.2f}"
            f" {backend / cpu_base:5.2f}x"
        )


if __name__ == "__main__":
    main()

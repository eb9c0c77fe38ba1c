"""Chaos: a fresh Planet X enumeration and a stream of small jobs, on private servers (PostgreSQL, a Redis of
its own, the API under granian, two `zolve worker --concurrency 1` processes on one host), run once clean
and once while things die on a seeded schedule; then what the faults cost.

    .venv/bin/python bench/chaos.py [--mode expert] [--small 50] [--seed 7]

The schedule is set in fractions of the clean run's duration (so `--mode standard` is a quick rehearsal):
a pool process running a shard killed every tenth of it, Redis killed (with every message it held) at 20%
and 60% and started again after `--redis-down` seconds, and one whole worker killed at 40% and started
again 5 s later. Production settings throughout (lease 30 s, sweep 5 s, requeue_after 120 s).

Reported: the total time against the clean run; for each fault, the time from its end (Redis back, the
kill) to the first shard completed after it; the longest submit → done of a small job, and the longest
wait of a small job beyond the outage it was submitted in (a message the broker lost, waited for); shards
run twice; boards against distinct boards; 5xx answers and refused submits; leases left behind.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import requests
from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402
from store import dashboard, rows  # noqa: E402
from store.models import Job, Shard  # noqa: E402

EXPECTED = {"standard": 4446, "expert": 1_138_272}
WORKERS = ("worker-1", "worker-2")
FINAL = ("succeeded", "failed", "cancelled")
#: the sweeper's log line (workers.main._sweep): jobs and shards sent again
RESENT = re.compile(r"re-sent (\d+) jobs and (\d+) shards")


@dataclass
class Fault:
    what: str
    at: datetime  # when the fault ended: Redis back, the kill
    first_shard_after: float | None = None


@dataclass
class Outcome:
    seconds: float
    boards: int = 0
    distinct: int = 0
    count: int | None = None
    small_ok: int = 0
    small_total: int = 0
    longest_small: float = 0.0
    longest_lost_wait: float = 0.0
    twice: int = 0
    server_errors: int = 0
    refused_submits: int = 0
    leases_left: int = 0
    #: rows the sweeper sent again (sent over requeue_after ago, not claimed), and wake-ups that found
    #: nothing to claim (duplicates, or messages of work already done)
    resent: int = 0
    no_op_wakeups: int = 0
    faults: list[Fault] = field(default_factory=list)


class Client:
    """The API as a client sees it, counting every 5xx and every submit that is not a 202."""

    def __init__(self, stack: Stack):
        self.url, self.http = stack.url, requests.Session()
        self.http.headers["Authorization"] = f"Bearer {stack.key}"
        self.server_errors = self.refused = 0
        self.lock = threading.Lock()

    def submit(self, body: dict) -> str | None:
        response = self._call("post", "/jobs", json=body)
        if response is None or response.status_code != 202:
            with self.lock:
                self.refused += 1
            return None
        return response.json()["id"]

    def state(self, job_id: str) -> str | None:
        response = self._call("get", f"/jobs/{job_id}")
        return response.json()["state"] if response is not None and response.ok else None

    def _call(self, method: str, path: str, **kwargs) -> requests.Response | None:
        try:
            response = self.http.request(method, self.url + path, timeout=30, **kwargs)
        except requests.RequestException:
            with self.lock:
                self.server_errors += 1
            return None
        if response.status_code >= 500:
            with self.lock:
                self.server_errors += 1
        return response


def small_job(n: int) -> dict:
    return {"kind": "dice", "params": {"dice": 3, "faces": 4, "max_face": 12 + n}, "fresh": True}


class Run:
    def __init__(self, args: argparse.Namespace, stack: Stack):
        self.args, self.stack, self.client = args, stack, Client(stack)
        self.small: list[str] = []
        self.outages: list[tuple[datetime, datetime]] = []
        self.faults: list[Fault] = []
        self.done = threading.Event()

    def submit_small_jobs(self) -> None:
        for n in range(self.args.small):
            if self.done.wait(self.args.small_every):
                return
            job_id = self.client.submit(small_job(n))
            if job_id:
                self.small.append(job_id)

    def wait_for(self, job_ids: list[str]) -> None:
        pending = set(job_ids)
        while pending:
            pending = {job_id for job_id in pending if self.client.state(job_id) not in FINAL}
            time.sleep(0.5)

    def play(self, schedule: list[tuple[float, str]]) -> Outcome:
        started = time.monotonic()
        body = {"kind": "planetx.enumerate", "params": {"mode": self.args.mode}, "fresh": True}
        body["time_limit"] = 3600
        enumeration = self.client.submit(body)
        assert enumeration, "the enumeration was refused"
        feeder = threading.Thread(target=self.submit_small_jobs, daemon=True)
        feeder.start()
        chaos = threading.Thread(target=self.run_schedule, args=(schedule, started), daemon=True)
        chaos.start()
        self.wait_for([enumeration])
        feeder.join()
        self.wait_for(self.small)
        seconds = time.monotonic() - started
        self.done.set()
        chaos.join()
        return self.measure(enumeration, seconds)

    # -- faults ------------------------------------------------------------------------------------
    def run_schedule(self, schedule: list[tuple[float, str]], started: float) -> None:
        for offset, fault in schedule:
            if self.done.wait(max(0.0, started + offset - time.monotonic())):
                return
            getattr(self, fault)()

    def kill_pool_process(self) -> None:
        with self.stack.db.session() as session:
            busy = [w for w in dashboard.workers_alive(session, within=15) if w.running]
        if busy:
            victim = random.choice(sorted(busy, key=lambda w: w.name))
            try:
                os.kill(victim.pid, signal.SIGKILL)
            except ProcessLookupError:
                return
            self.faults.append(Fault("pool process killed", datetime.now(UTC)))

    def kill_redis(self) -> None:
        assert self.stack.services is not None
        down = datetime.now(UTC)
        self.stack.services.stop_redis()
        time.sleep(self.args.redis_down)
        self.stack.services.start_redis()
        back = datetime.now(UTC)
        self.outages.append((down, back))
        self.faults.append(Fault(f"Redis down {self.args.redis_down:.0f} s", back))

    def kill_worker(self) -> None:
        name = WORKERS[1]
        self.stack.kill(name)
        self.faults.append(Fault("whole worker killed", datetime.now(UTC)))
        time.sleep(5)
        self.stack.start_worker(concurrency=1, name=name)

    # -- figures -----------------------------------------------------------------------------------
    def measure(self, enumeration: str, seconds: float) -> Outcome:
        outcome = Outcome(seconds, faults=self.faults)
        outcome.server_errors, outcome.refused_submits = self.client.server_errors, self.client.refused
        with self.stack.db.session() as session:
            job = session.get(Job, enumeration)
            outcome.count = (job.result or {}).get("count") if job.state == "succeeded" else None
            stored = rows.keys_stored(session, job.id).tolist()
            outcome.boards = job.rows_done  # a shard stored twice counts its boards twice
            outcome.distinct = len(set(stored))
            outcome.twice = session.scalar(
                select(func.count()).where(Shard.job_id == job.id, Shard.attempts > 1)
            )
            outcome.leases_left = session.scalar(
                select(func.count()).where(Shard.lease_owner.isnot(None))
            ) + session.scalar(select(func.count()).where(Job.lease_owner.isnot(None)))
            small = session.scalars(select(Job).where(Job.id.in_(self.small))).all()
            finished = session.scalars(
                select(Shard.finished_at).where(Shard.job_id == job.id, Shard.finished_at.isnot(None))
            ).all()
        logs = self.stack.logs()
        outcome.resent = sum(int(a) + int(b) for a, b in RESENT.findall(logs))
        outcome.no_op_wakeups = logs.count("nothing to claim")
        outcome.small_total = self.args.small
        outcome.small_ok = sum(1 for j in small if j.state == "succeeded")
        outcome.longest_small = max((j.finished_at - j.created_at).total_seconds() for j in small)
        outcome.longest_lost_wait = max(self.wait_beyond_outage(j) for j in small)
        for fault in self.faults:
            after = [f for f in finished if f > fault.at]
            fault.first_shard_after = (min(after) - fault.at).total_seconds() if after else None
        return outcome

    def wait_beyond_outage(self, job: Job) -> float:
        """Submit → start of a small job, counted from when the broker could take its message."""
        ready = job.created_at
        for down, back in self.outages:
            if down <= ready <= back:
                ready = back
        return max(0.0, (job.started_at - ready).total_seconds())


def one_run(args: argparse.Namespace, schedule: list[tuple[float, str]]) -> Outcome:
    with Stack(private=True) as stack:
        for name in WORKERS:
            stack.start_worker(concurrency=1, name=name)
        return Run(args, stack).play(schedule)


def chaos_schedule(clean_seconds: float, seed: int) -> list[tuple[float, str]]:
    rng = random.Random(seed)
    random.seed(seed)  # the pool process each kill picks
    schedule = [(clean_seconds * f, "kill_redis") for f in (0.2, 0.6)]
    schedule.append((clean_seconds * 0.4, "kill_worker"))
    step = clean_seconds / 10
    schedule += [(step * k + rng.uniform(-step / 4, step / 4), "kill_pool_process") for k in range(1, 10)]
    return sorted(schedule)


def report(args: argparse.Namespace, clean: Outcome, chaos: Outcome) -> None:
    print(f"\n## chaos ({args.mode} enumeration + {args.small} small jobs, seed {args.seed})\n")
    print("| | clean | chaos |\n|---|---|---|")
    rows = [
        (
            "total time",
            f"{clean.seconds:.0f} s",
            f"{chaos.seconds:.0f} s ({chaos.seconds / clean.seconds:.2f}×)",
        ),
        (
            "boards / distinct",
            f"{clean.boards:,} / {clean.distinct:,}",
            f"{chaos.boards:,} / {chaos.distinct:,}",
        ),
        ("result count", f"{clean.count:,}", f"{chaos.count:,}" if chaos.count else "—"),
        (
            "small jobs succeeded",
            f"{clean.small_ok}/{clean.small_total}",
            f"{chaos.small_ok}/{chaos.small_total}",
        ),
        ("longest small job, submit → done", f"{clean.longest_small:.1f} s", f"{chaos.longest_small:.1f} s"),
        (
            "longest wait on a lost message",
            f"{clean.longest_lost_wait:.1f} s",
            f"{chaos.longest_lost_wait:.1f} s",
        ),
        ("shards run twice", str(clean.twice), str(chaos.twice)),
        (
            "5xx / refused submits",
            f"{clean.server_errors} / {clean.refused_submits}",
            f"{chaos.server_errors} / {chaos.refused_submits}",
        ),
        ("leases left behind", str(clean.leases_left), str(chaos.leases_left)),
        ("rows re-sent by the sweeper", str(clean.resent), str(chaos.resent)),
        ("wake-ups that found nothing to claim", str(clean.no_op_wakeups), str(chaos.no_op_wakeups)),
    ]
    for name, a, b in rows:
        print(f"| {name} | {a} | {b} |")
    print("\n| fault | first shard done after it |\n|---|---|")
    for fault in chaos.faults:
        after = "—" if fault.first_shard_after is None else f"{fault.first_shard_after:.1f} s"
        print(f"| {fault.what} | {after} |")
    expected = EXPECTED[args.mode]
    lost = [
        name
        for name, bad in (
            ("boards", chaos.count != expected or chaos.boards != expected),
            ("duplicates", chaos.boards != chaos.distinct),
            ("small jobs", chaos.small_ok != chaos.small_total),
            ("5xx", chaos.server_errors),
            ("refused submits", chaos.refused_submits),
            ("leases", chaos.leases_left),
        )
        if bad
    ]
    verdict = "nothing lost, nothing twice" if not lost else "FAILED: " + ", ".join(lost)
    print(f"\nexpected {expected:,} boards; {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(EXPECTED), default="expert")
    parser.add_argument("--small", type=int, default=50)
    parser.add_argument("--small-every", type=float, help="seconds between small jobs (default: by mode)")
    parser.add_argument("--redis-down", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.small_every is None:
        args.small_every = 4.0 if args.mode == "expert" else 0.3
    clean = one_run(args, [])
    print(f"clean run: {clean.seconds:.0f} s", flush=True)
    chaos = one_run(args, chaos_schedule(clean.seconds, args.seed))
    report(args, clean, chaos)


if __name__ == "__main__":
    main()

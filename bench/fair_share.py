"""Fair share on a shared service: a client's short jobs beside another client's bulk job, and two bulk
clients side by side, on the whole stack (API under granian, Redis, Celery worker, PostgreSQL).

Baselines measured in the same run: the short jobs' latency on an idle service, and the bulk job's
duration when it runs alone.

    .venv/bin/python bench/fair_share.py [--short 20] [--secrets 600] [--concurrency 2]
    .venv/bin/python bench/fair_share.py --workload long [--runs 10] [--concurrency 2]
    .venv/bin/python bench/fair_share.py --weights 1,3 [--jobs 60] [--concurrency 2]

The `mixed` workload (the default) has four phases: (1) client B submits --short `dice` jobs one after
another on the idle service (submit → succeeded, measured by the client); (2) client A's
`mastermind.play` bulk job alone; (3) the same bulk job again while B submits its short jobs; (4) clients
A and C submit the same bulk job at once: each one's share of the worker time while both run (from the
shards' start and finish times).

With `--weights A,C` (the `weights` workload, issue 67), clients A and C, of keys with those weights,
submit `--jobs` jobs each, in turn (a few tenths of a second of Z3 each), while client B submits short
jobs (a time limit of 5 s: the short lane's, as `zolve up` runs it beside the solver processes) beside
them: each bulk client's share of the workers' time in the steady state, while both have jobs held (from
the start of the last job sent before any job finished, until either client's last job is sent), against
the share its weights ask for, and B's latency. The baseline of the same run: the same
with equal weights (1,1).

The `long` workload is the probe of issue 37: client A's long unsharded jobs (`dice`, 10 dice of 20
faces, which search until their time limit) on every solver process, and client B's short job (a time
limit of 5 s: the short lane's) submitted --runs times one after another beside them. Each short job's
wait is its queue time (created -> started, the service's own timestamps). Baselines of the same run:
the short job on the idle service, and one run beside the long jobs with the short lane stopped (the
service before the lane: the wait is the long jobs' time, --unlaned-limit seconds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import requests
from sqlalchemy import and_, func, or_, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402
from core.states import FINAL_STATES  # noqa: E402
from services.messages import SHORT_QUEUE, SOLVER_QUEUES  # noqa: E402
from store import keys  # noqa: E402
from store.models import Job, Shard  # noqa: E402

SHORT = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


def bulk(secrets: int, seed: int) -> dict:
    return {
        "kind": "mastermind.play",
        "params": {"n": 5, "k": 6, "secrets": {"sample": secrets, "seed": seed}},
        "time_limit": 3600,
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Client:
    def __init__(self, stack: Stack, name: str, weight: float = 1.0):
        with stack.db.session() as session:
            key = keys.create_key(session, name=name, weight=weight).key
        self.url, self.http = stack.url, requests.Session()
        self.http.headers["Authorization"] = f"Bearer {key}"

    def submit(self, body: dict) -> str:
        response = self.http.post(self.url + "/jobs", json=body)
        response.raise_for_status()
        return response.json()["id"]

    def wait(self, job_id: str) -> dict:
        while True:
            job = self.http.get(f"{self.url}/jobs/{job_id}", params={"wait": 30}).json()
            if job["state"] in FINAL_STATES:
                if job["state"] != "succeeded":
                    raise RuntimeError(f"job {job_id} {job['state']}: {job.get('error')}")
                return job

    def latency(self, body: dict) -> float:
        started = time.perf_counter()
        self.wait(self.submit(body))
        return time.perf_counter() - started

    def run(self, body: dict) -> tuple[str, float]:
        started = time.perf_counter()
        job_id = self.submit(body)
        self.wait(job_id)
        return job_id, time.perf_counter() - started


#: the probe's long job and the short lane's job (time limit under ZOLVE_SHORT_JOB_SECONDS)
LONG = {"kind": "dice", "params": {"dice": 10, "faces": 20}, "fresh": True}
LANED = {"kind": "dice", "params": {"dice": 3, "faces": 6}, "time_limit": 5, "fresh": True}


def queue_wait(job: dict) -> float:
    """Created -> started, by the service's clock."""
    return (
        datetime.fromisoformat(job["started_at"]) - datetime.fromisoformat(job["created_at"])
    ).total_seconds()


def short_latencies(client: Client, count: int, pause: float = 0.5) -> list[float]:
    latencies = []
    for _ in range(count):
        latencies.append(client.latency(SHORT))
        time.sleep(pause)
    return latencies


def shares(stack: Stack, jobs: dict[str, str]) -> dict[str, float]:
    """Each client's share of the shard time spent while both bulk jobs ran."""
    with stack.db.session() as session:
        spans = {
            name: [
                (started, finished)
                for started, finished in session.execute(
                    select(Shard.started_at, Shard.finished_at).where(
                        Shard.job_id == job_id, Shard.finished_at.isnot(None), Shard.started_at.isnot(None)
                    )
                )
            ]
            for name, job_id in jobs.items()
        }
    begin = max(min(start for start, _ in runs) for runs in spans.values())
    end = min(max(finish for _, finish in runs) for runs in spans.values())
    return _shares_between(spans, begin, end)


def describe(name: str, values: list[float]) -> str:
    return (
        f"{name}: p50 {percentile(values, 0.5):.2f} s, p95 {percentile(values, 0.95):.2f} s, "
        f"max {max(values):.2f} s (n={len(values)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", choices=("mixed", "long", "weights"), default="mixed")
    parser.add_argument("--weights", help="weights: the two bulk clients' key weights, e.g. 1,3")
    parser.add_argument("--jobs", type=int, default=60, help="weights: jobs each bulk client submits")
    parser.add_argument("--short", type=int, default=20, help="mixed: short jobs per phase")
    parser.add_argument("--secrets", type=int, default=600, help="mixed: games in each bulk job")
    parser.add_argument("--concurrency", type=int, default=2, help="solver processes")
    parser.add_argument("--runs", type=int, default=10, help="long: short jobs beside the long ones")
    parser.add_argument("--long-limit", type=float, default=120, help="long: the long jobs' time limit")
    parser.add_argument("--unlaned-limit", type=float, default=20, help="long: their limit without the lane")
    args = parser.parse_args()
    if args.weights:
        args.workload = "weights"
    workloads = {"long": long_workload, "mixed": mixed_workload, "weights": weights_workload}
    workloads[args.workload](args)


#: one of a backlogged client's many jobs in the weights workload: a few tenths of a second of Z3
WEIGHED = {"kind": "dice", "params": {"dice": 3, "faces": 8}, "fresh": True}


def weights_workload(args: argparse.Namespace) -> None:
    weights = tuple(float(weight) for weight in (args.weights or "1,3").split(","))
    if len(weights) != 2 or min(weights) <= 0:
        raise SystemExit("--weights takes two positive numbers, e.g. 1,3")
    with Stack(api_workers=2) as stack:
        # as `zolve up` runs them: the solver processes, and the short lane beside them
        stack.start_worker(concurrency=args.concurrency, queues=SOLVER_QUEUES)
        stack.start_worker(concurrency=1, name="short-lane", queues=SHORT_QUEUE)
        b = Client(stack, "short B")
        b.latency(LANED)  # warm up
        rows = []
        for pair in ((1.0, 1.0), weights):
            a, c = (
                Client(stack, f"bulk {name} ({weight:g})", weight)
                for name, weight in zip("AC", pair, strict=True)
            )
            share, short = side_by_side(stack, {"A": a, "C": c}, b, args.jobs)
            rows.append((pair, share, short))
            print(
                f"weights {pair[0]:g},{pair[1]:g}: A {share['A']:.1%}, C {share['C']:.1%}; "
                + describe("short jobs beside them", short),
                flush=True,
            )

        print()
        print("| weights A,C | A's share | C's share | C ÷ A | asked C ÷ A | off by | short job p50 / max |")
        print("|---|---|---|---|---|---|---|")
        for (weight_a, weight_c), share, short in rows:
            ratio, asked = share["C"] / share["A"], weight_c / weight_a
            cells = [f"{weight_a:g},{weight_c:g}", f"{share['A']:.1%}", f"{share['C']:.1%}", f"{ratio:.2f}"]
            cells += [
                f"{asked:.2f}",
                f"{ratio / asked - 1:+.0%}",
                f"{percentile(short, 0.5):.2f} / {max(short):.2f} s",
            ]
            print(f"| {' | '.join(cells)} |")
        print(
            f"\nworkers {args.concurrency}; the bulk clients submit {args.jobs} jobs each, in turn "
            f"({WEIGHED['kind']} {WEIGHED['params']}); the shares of the workers' time while both had "
            "jobs held (the steady state)"
        )


def side_by_side(
    stack: Stack, bulk_clients: dict[str, Client], short: Client, jobs: int
) -> tuple[dict[str, float], list[float]]:
    """Each bulk client submits `jobs` jobs at once; `short` submits short jobs one after another while
    both have jobs waiting. Returns each bulk client's share of the worker time until either one's last
    job started, and the short latencies."""
    ids: dict[str, list[str]] = {name: [] for name in bulk_clients}
    for _ in range(jobs):  # in turn: neither client's backlog is in place before the other's
        for name, client in bulk_clients.items():
            ids[name].append(client.submit(WEIGHED))
    latencies: list[float] = []
    samples: dict[str, list[int]] = {name: [] for name in ids}
    while all(
        _waiting(client, job_ids)
        for (name, client), job_ids in zip(bulk_clients.items(), ids.values(), strict=True)
    ):
        for name, job_ids in ids.items():
            samples[name].append(_jobs_in_flight(stack, job_ids))
        latencies.append(short.latency(LANED))
        time.sleep(0.5)
    in_flight = ", ".join(f"{name} {statistics.mean(counts or [0]):.1f}" for name, counts in samples.items())
    print(f"  jobs sent or running, mean of the samples: {in_flight}", flush=True)
    for name, client in bulk_clients.items():
        for job_id in ids[name]:
            client.wait(job_id)
    return job_shares(stack, ids, steady=True), latencies


def _jobs_in_flight(stack: Stack, job_ids: list[str]) -> int:
    """Of these jobs, how many were sent to the broker and not taken, or run: their client's window."""
    sent = or_(and_(Job.state == "queued", Job.enqueued_at.isnot(None)), Job.state == "running")
    with stack.db.session() as session:
        return int(session.scalar(select(func.count()).where(Job.id.in_(job_ids), sent)) or 0)


def _waiting(client: Client, job_ids: list[str]) -> bool:
    """Whether the client's last job has not started yet."""
    return client.http.get(f"{client.url}/jobs/{job_ids[-1]}").json()["state"] == "queued"


def job_shares(stack: Stack, jobs: dict[str, list[str]], steady: bool = False) -> dict[str, float]:
    """Each client's share of the jobs' run time from the first start to the moment either client's last
    job started (after it, that client has nothing waiting). `steady`: from the moment the last job sent
    before any job finished started, to the moment either client's last job was sent (after it, that
    client has nothing held, and its window drains)."""
    with stack.db.session() as session:
        columns = select(Job.started_at, Job.finished_at, Job.enqueued_at)
        rows = {name: list(session.execute(columns.where(Job.id.in_(ids)))) for name, ids in jobs.items()}
    spans = {name: [(start, finish) for start, finish, _ in runs] for name, runs in rows.items()}
    begin = min(start for runs in spans.values() for start, _ in runs)
    end = min(max(start for start, _ in runs) for runs in spans.values())
    if steady:
        begin = _steady_from(rows)
        end = min(max(sent for _, _, sent in runs) for runs in rows.values())
    for name, runs in spans.items():
        inside = [(s, f) for s, f in runs if begin <= s < end]
        mean_run = statistics.mean((f - s).total_seconds() for s, f in inside) if inside else 0.0
        print(f"  {name}: {len(inside)} jobs started in the interval, {mean_run:.2f} s each on average")
    return _shares_between(spans, begin, end)


def _steady_from(rows: dict[str, list[tuple[datetime, datetime, datetime]]]) -> datetime:
    """When the broker's queue first held only work that finishes released: the start of the last job
    sent before the first finish (the windows filled at submit, in submit order, are behind it)."""
    every = [row for runs in rows.values() for row in runs]
    first_finish = min(finish for _, finish, _ in every)
    return max(start for start, _, sent in every if sent <= first_finish)


def _shares_between(
    spans: dict[str, list[tuple[datetime, datetime]]], begin: datetime, end: datetime
) -> dict[str, float]:
    """Each client's share of the run time its spans (start, finish) spent between begin and end."""
    seconds = {
        name: sum(max(0.0, (min(f, end) - max(s, begin)).total_seconds()) for s, f in runs)
        for name, runs in spans.items()
    }
    total = sum(seconds.values()) or 1.0
    return {name: value / total for name, value in seconds.items()}


def long_workload(args: argparse.Namespace) -> None:
    with Stack(api_workers=2) as stack:
        stack.start_worker(concurrency=args.concurrency, queues=SOLVER_QUEUES)
        stack.start_worker(concurrency=1, name="short-lane", queues=SHORT_QUEUE)
        a, b = Client(stack, "long A"), Client(stack, "short B")
        b.latency(LANED)  # warm up
        idle = [queue_wait(b.wait(b.submit(LANED))) for _ in range(args.runs)]
        print(describe("short job's wait, idle service", idle), flush=True)

        beside = beside_long_jobs(a, b, args.concurrency, args.long_limit, args.runs)
        print(describe("short job's wait beside A's long jobs on every solver", beside), flush=True)

        stack.stop_worker("short-lane")
        unlaned = beside_long_jobs(a, b, args.concurrency, args.unlaned_limit, 1)
        print(describe("the same without the short lane", unlaned), flush=True)

        print()
        print("| short job's wait (created -> started) | p50 | p95 | max | p95 / idle p95 |")
        print("|---|---|---|---|---|")
        for name, values in (
            ("idle service", idle),
            (f"beside {args.concurrency} long jobs of one client (short lane)", beside),
            (f"beside them, no short lane (long jobs of {args.unlaned_limit:g} s)", unlaned),
        ):
            p95 = percentile(values, 0.95)
            print(
                f"| {name} | {percentile(values, 0.5):.2f} s | {p95:.2f} s | {max(values):.2f} s "
                f"| {p95 / percentile(idle, 0.95):.1f}× |"
            )
        print(f"\nruns {args.runs}; solver processes {args.concurrency}; short lane 1 process")


def beside_long_jobs(a: Client, b: Client, solvers: int, limit: float, runs: int) -> list[float]:
    """B's short jobs, one after another, while A's long jobs hold every solver process; the long jobs
    must still be running when each short job ends (else the run does not count: an error)."""
    long_jobs = [a.submit({**LONG, "time_limit": limit}) for _ in range(solvers)]
    try:
        while any(a.http.get(f"{a.url}/jobs/{job}").json()["state"] != "running" for job in long_jobs):
            time.sleep(0.1)
        waits = []
        for _ in range(runs):
            waits.append(queue_wait(b.wait(b.submit(LANED))))
            states = {a.http.get(f"{a.url}/jobs/{job}").json()["state"] for job in long_jobs}
            if runs > 1 and states != {"running"}:
                raise RuntimeError(
                    f"the long jobs ended before the short ones ({states}): raise --long-limit"
                )
        return waits
    finally:
        for job in long_jobs:
            a.http.post(f"{a.url}/jobs/{job}/cancel")
        for job in long_jobs:
            a.http.get(f"{a.url}/jobs/{job}", params={"wait": 30})


def mixed_workload(args: argparse.Namespace) -> None:
    with Stack(api_workers=2) as stack:
        stack.start_worker(concurrency=args.concurrency)
        a, b, c = Client(stack, "bulk A"), Client(stack, "short B"), Client(stack, "bulk C")
        b.latency(SHORT)  # warm up
        idle = short_latencies(b, args.short)
        print(describe("short jobs, idle service", idle), flush=True)

        _, alone = a.run(bulk(args.secrets, 1))
        print(f"bulk job alone: {alone:.1f} s", flush=True)

        beside: list[float] = []
        bulk_done = threading.Event()
        bulk_seconds: list[float] = []

        def run_bulk() -> None:
            bulk_seconds.append(a.run(bulk(args.secrets, 2))[1])
            bulk_done.set()

        thread = threading.Thread(target=run_bulk)
        thread.start()
        time.sleep(3)  # the bulk job is planned and fills every worker
        while len(beside) < args.short and not bulk_done.is_set():
            beside.append(b.latency(SHORT))
            time.sleep(0.5)
        thread.join()
        print(describe("short jobs beside the bulk job", beside), flush=True)
        print(f"bulk job beside the short jobs: {bulk_seconds[0]:.1f} s", flush=True)

        ids: dict[str, str] = {}
        runs = [
            threading.Thread(target=lambda n=n, cl=cl: ids.__setitem__(n, cl.run(bulk(args.secrets, 3))[0]))
            for n, cl in (("A", a), ("C", c))
        ]
        for run in runs:
            run.start()
        for run in runs:
            run.join()
        share = shares(stack, ids)

        print()
        print("| measure | value | ratio to its baseline |")
        print("|---|---|---|")
        for name, values in (("idle", idle), ("beside bulk", beside)):
            for q, label in ((0.5, "p50"), (0.95, "p95")):
                value = percentile(values, q)
                base = percentile(idle, q)
                print(f"| short job {label}, {name} | {value:.2f} s | {value / base:.2f}× |")
        print(f"| short job max, beside bulk | {max(beside):.2f} s | {max(beside) / max(idle):.2f}× |")
        print(f"| bulk job alone | {alone:.1f} s | 1.00× |")
        print(f"| bulk job beside short jobs | {bulk_seconds[0]:.1f} s | {bulk_seconds[0] / alone:.2f}× |")
        for name, value in sorted(share.items()):
            print(f"| bulk client {name}'s share of worker time while both run | {value:.0%} | |")
        print(f"\nmean short latency idle {statistics.mean(idle):.2f} s; workers {args.concurrency}")


if __name__ == "__main__":
    main()

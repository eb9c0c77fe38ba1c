"""Submit → succeeded latency of a trivial `dice` job through the running service (API under granian,
Redis, a Celery worker, PostgreSQL), against two baselines measured in this same run: solving the same
puzzle in-process, and a round trip to the bare /health endpoint.

    .venv/bin/python bench/dice_latency.py [--jobs 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402
from puzzles.dice import solve  # noqa: E402
from puzzles.runtime import Run  # noqa: E402

TRIVIAL = {"dice": 3, "faces": 4}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def in_process_seconds(runs: int) -> list[float]:
    params = {**TRIVIAL, "max_face": None, "beats": "cycle"}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        with Run(60) as run:
            solve(params, run)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=100)
    args = parser.parse_args()

    with Stack(api_workers=1) as stack:
        stack.start_worker(concurrency=1)
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {stack.key}"
        health = []
        for _ in range(args.jobs):
            started = time.perf_counter()
            http.get(stack.url + "/health").raise_for_status()
            health.append(time.perf_counter() - started)
        latencies = []
        for i in range(args.jobs + 5):
            started = time.perf_counter()
            job = http.post(stack.url + "/jobs", json={"kind": "dice", "params": TRIVIAL}).json()
            while job["state"] not in ("succeeded", "failed", "cancelled"):
                job = http.get(f"{stack.url}/jobs/{job['id']}?wait=10").json()
            assert job["state"] == "succeeded", job
            if i >= 5:  # warm-up: first forks, imports, connections
                latencies.append(time.perf_counter() - started)
        solve_times = in_process_seconds(args.jobs)

    solo = statistics.median(solve_times)
    bare = statistics.median(health)
    median, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    print(f"dice {TRIVIAL} submit → succeeded, {args.jobs} jobs one after another, 1 worker process")
    print(f"  service latency    median {median * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms")
    print(f"  in-process solve   median {solo * 1000:7.1f} ms   (baseline: same puzzle, no service)")
    print(f"  bare /health       median {bare * 1000:7.1f} ms   (baseline: one HTTP round trip)")
    print(f"  ratio latency / in-process solve  = {median / solo:.1f}x")
    print(f"  ratio latency / bare round trip   = {median / bare:.1f}x")
    print(f"  service overhead per job (median latency - median solve) = {(median - solo) * 1000:.1f} ms")


if __name__ == "__main__":
    main()

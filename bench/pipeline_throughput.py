"""Jobs per second through the whole pipeline with 1 and 2 worker processes, against the rate of solving
the same puzzles one after another in this process (the baseline).

    .venv/bin/python bench/pipeline_throughput.py [--jobs 300]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import requests
from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.dice_latency import TRIVIAL, in_process_seconds  # noqa: E402
from bench.stack import Stack  # noqa: E402
from store.models import Job  # noqa: E402


def run_batch(stack: Stack, jobs: int) -> float:
    """Submit `jobs` jobs as fast as one client can, return jobs/s from first submit to last success."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {stack.key}"
    started = time.perf_counter()
    ids = [
        http.post(stack.url + "/jobs", json={"kind": "dice", "params": TRIVIAL}).json()["id"]
        for _ in range(jobs)
    ]
    while True:
        with stack.db.session() as session:
            done = session.scalar(select(func.count()).where(Job.id.in_(ids), Job.state == "succeeded"))
        if done == jobs:
            return jobs / (time.perf_counter() - started)
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=300)
    args = parser.parse_args()

    rates = {}
    with Stack(api_workers=1) as stack:
        for workers in (1, 2):
            stack.start_worker(concurrency=workers)
            run_batch(stack, 10)  # warm-up
            rates[workers] = run_batch(stack, args.jobs)
        stack.stop_worker()
    serial = 1 / (sum(in_process_seconds(50)) / 50)

    print(f"dice {TRIVIAL}: {args.jobs} jobs submitted back to back, measured until all succeeded")
    print(f"  in-process, one after another : {serial:7.1f} jobs/s (baseline)")
    for workers, rate in rates.items():
        print(f"  service, {workers} worker process(es) : {rate:7.1f} jobs/s = {rate / serial:.2f}x baseline")
    print(f"  2 workers / 1 worker = {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()

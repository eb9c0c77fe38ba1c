"""The API under load: many concurrent clients against gunicorn with real PostgreSQL and Redis.

Three phases of `--seconds` each, every client on its own keep-alive connection:
1. bare: `--clients` clients hammer `GET /health` (no key, no database): the server's ceiling;
2. status: the same number of clients poll `GET /jobs/{id}` of finished jobs (auth, rate limit; the row
   is cached once the job is final), then of unfinished (queued) jobs, whose every poll reads PostgreSQL;
3. submits: a fifth of the clients, each with a key of its own, submit trivial jobs as fast as they are
   answered (no worker runs: the jobs pile up, held in their client's turn), the rest poll finished jobs;
4. mixed: a fifth of the clients submit trivial jobs and poll each to the end, the rest poll statuses.
Reports requests/s, p50/p99 latency per endpoint, errors, status/bare throughput, and the submits' p99
against bare /health's p99 of the same run.

    .venv/bin/python bench/api_load.py [--clients 50] [--seconds 30] [--api-workers 2]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402

TRIVIAL = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)

    def add(self, name: str, seconds: float, ok: bool) -> None:
        with self.lock:
            self.latencies[name].append(seconds)
            if not ok:
                self.errors[name] += 1


class Client:
    """One keep-alive HTTP connection."""

    def __init__(self, port: int, key: str | None, recorder: Recorder):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.recorder = recorder

    def call(self, name: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        headers = dict(self.headers)
        payload = None
        if body is not None:
            payload, headers["Content-Type"] = json.dumps(body), "application/json"
        started = time.perf_counter()
        try:
            self.connection.request(method, path, body=payload, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
            status = response.status
        except (OSError, http.client.HTTPException):
            self.connection.close()
            status, data = 0, b"{}"
        self.recorder.add(name, time.perf_counter() - started, 200 <= status < 300)
        return status, json.loads(data or b"{}")


def run_clients(count: int, seconds: float, loop) -> float:
    """Run `loop(index, stop_event)` in `count` threads for `seconds`; returns the elapsed time."""
    stop = threading.Event()
    threads = [threading.Thread(target=loop, args=(i, stop), daemon=True) for i in range(count)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(60)
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(phase: str, recorder: Recorder, elapsed: float) -> dict[str, float]:
    rates = {}
    for name, values in sorted(recorder.latencies.items()):
        rates[name] = len(values) / elapsed
        print(
            f"  {phase:7} {name:16} {rates[name]:8.0f} req/s   p50 {statistics.median(values) * 1000:6.1f} ms"
            f"   p99 {percentile(values, 0.99) * 1000:6.1f} ms   errors {recorder.errors[name]}"
            f" of {len(values)}"
        )
    return rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--api-workers", type=int, default=2)
    args = parser.parse_args()
    # the limiter stays on (its Redis round trip is part of every request) but far above this load
    os.environ["ZOLVE_RATE_LIMIT"] = os.environ["ZOLVE_SUBMIT_RATE_LIMIT"] = "10000000 per minute"

    with Stack(api_workers=args.api_workers) as stack:
        stack.start_worker(concurrency=1)
        seed = Client(stack.port, stack.key, Recorder())
        job_ids = []
        for _ in range(20):
            _, job = seed.call("seed", "POST", "/jobs", TRIVIAL)
            job_ids.append(job["id"])
        for job_id in job_ids:
            seed.call("seed", "GET", f"/jobs/{job_id}?wait=10")
        stack.stop_worker()  # these stay queued: polls of unfinished jobs always read the database
        waiting_ids = [seed.call("seed", "POST", "/jobs", TRIVIAL)[1]["id"] for _ in range(20)]

        def bare_loop(index: int, stop: threading.Event, recorder: Recorder) -> None:
            client = Client(stack.port, None, recorder)
            while not stop.is_set():
                client.call("GET /health", "GET", "/health")

        def status_loop(
            index: int, stop: threading.Event, recorder: Recorder, ids: list[str] = job_ids
        ) -> None:
            client = Client(stack.port, stack.key, recorder)
            n = index
            while not stop.is_set():
                client.call("GET /jobs/{id}", "GET", f"/jobs/{ids[n % len(ids)]}")
                n += 1

        def submit_loop(index: int, stop: threading.Event, recorder: Recorder) -> None:
            client = Client(stack.port, stack.key, recorder)
            while not stop.is_set():
                status, job = client.call("POST /jobs", "POST", "/jobs", TRIVIAL)
                while status == 202 and job.get("state") not in ("succeeded", "failed", "cancelled"):
                    if stop.is_set():
                        return
                    status, job = client.call("GET /jobs/{id}?wait", "GET", f"/jobs/{job['id']}?wait=5")

        print(
            f"{args.clients} concurrent clients, {args.seconds:g} s per phase, gunicorn "
            f"{args.api_workers} processes × 8 threads, 1 worker process, all on this machine"
        )
        bare = Recorder()
        elapsed = run_clients(args.clients, args.seconds, lambda i, s: bare_loop(i, s, bare))
        bare_rate = report("bare", bare, elapsed)["GET /health"]
        status = Recorder()
        elapsed = run_clients(args.clients, args.seconds, lambda i, s: status_loop(i, s, status))
        status_rate = report("status", status, elapsed)["GET /jobs/{id}"]
        waiting = Recorder()
        elapsed = run_clients(
            args.clients, args.seconds, lambda i, s: status_loop(i, s, waiting, waiting_ids)
        )
        waiting_rate = report("queued", waiting, elapsed)["GET /jobs/{id}"]
        submitters = max(1, args.clients // 5)
        own_keys = [stack.new_key() for _ in range(submitters)]

        def submit_only_loop(index: int, stop: threading.Event, recorder: Recorder) -> None:
            client = Client(stack.port, own_keys[index], recorder)
            while not stop.is_set():
                client.call("POST /jobs", "POST", "/jobs", TRIVIAL)

        submits = Recorder()

        def submits_loop(index: int, stop: threading.Event) -> None:
            if index < submitters:
                submit_only_loop(index, stop, submits)
            else:
                status_loop(index, stop, submits)

        elapsed = run_clients(args.clients, args.seconds, submits_loop)
        submit_rate = report("submits", submits, elapsed)["POST /jobs"]
        stack.start_worker(concurrency=1)
        mixed = Recorder()

        def mixed_loop(index: int, stop: threading.Event) -> None:
            (submit_loop if index < submitters else status_loop)(index, stop, mixed)

        elapsed = run_clients(args.clients, args.seconds, mixed_loop)
        report("mixed", mixed, elapsed)
        print(
            f"  status polls / bare endpoint throughput = {status_rate / bare_rate:.2f}x finished jobs,"
            f" {waiting_rate / bare_rate:.2f}x unfinished"
            f" ({status_rate:.0f}, {waiting_rate:.0f} / {bare_rate:.0f} req/s)"
        )
        bare_p99 = percentile(bare.latencies["GET /health"], 0.99) * 1000
        submit_p99 = percentile(submits.latencies["POST /jobs"], 0.99) * 1000
        print(
            f"  submits beside {args.clients - submitters} pollers: {submit_rate:.0f}/s"
            f" from {submitters} keys,"
            f" p99 {submit_p99:.0f} ms = {submit_p99 / bare_p99:.2f}x bare /health p99 ({bare_p99:.0f} ms)"
        )
        errors = sum(r.errors[name] for r in (bare, status, waiting, submits, mixed) for name in r.latencies)
        print(f"  errors (non-2xx or connection failures) across all phases: {errors}")


if __name__ == "__main__":
    main()

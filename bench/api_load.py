"""The API under load: many concurrent clients against `zolve api` (granian) with real PostgreSQL and Redis.

Three phases of `--seconds` each, every client on its own keep-alive connection:
1. bare: `--clients` clients hammer `GET /health` (no key, no database): the server's ceiling;
2. status: the same number of clients poll `GET /jobs/{id}` of finished jobs (auth, rate limit; the row
   is cached for a minute once the job is final), then of unfinished (queued) jobs, whose rows each API
   process reads from PostgreSQL again once its copy is ZOLVE_STATUS_CACHE_SECONDS (1 s) old;
3. submits: a fifth of the clients, each with a key of its own, submit trivial jobs as fast as they are
   answered (no worker runs: the jobs pile up, held in their client's turn), the rest poll finished jobs;
4. mixed: a fifth of the clients submit trivial jobs and poll each to the end, the rest poll statuses.
Reports requests/s, p50/p99 latency per endpoint, errors, PostgreSQL transactions/s per phase (any
process's, from pg_stat_database), status/bare throughput, and the submits' p99 against bare /health's
p99 of the same run.

The clients are coroutines on one event loop (uvloop), each with its own connection, each sending its
next request when the last is answered: they cost the machine far less than threads would (a thread per
client, waiting for the GIL, also lengthened the latencies measured), so more of its 2 cores go to the
service, as with clients on other machines.

Phases 1 and 2 are repeated `--rounds` times in turn, and the median of the rounds' ratios is reported:
the machine's speed drifts by more than the ratio measured within a few minutes.

    .venv/bin/python bench/api_load.py [--clients 50] [--seconds 30] [--api-workers 2] [--queued 20]
        [--rounds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path

import uvloop
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402

TRIVIAL = {"kind": "dice", "params": {"dice": 3, "faces": 4}}
FINAL = ("succeeded", "failed", "cancelled")


class Recorder:
    def __init__(self) -> None:
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)

    def add(self, name: str, seconds: float, ok: bool) -> None:
        self.latencies[name].append(seconds)
        if not ok:
            self.errors[name] += 1


class Client:
    """One keep-alive HTTP/1.1 connection, a request at a time."""

    def __init__(self, port: int, key: str | None, recorder: Recorder):
        self.port, self.recorder = port, recorder
        self.auth = f"Authorization: Bearer {key}\r\n" if key else ""
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def call(
        self, name: str, method: str, path: str, body: dict | None = None, parsed: bool = False
    ) -> tuple[int, dict]:
        """The answer's status, and its JSON body when `parsed` (else {}: polls need not decode it)."""
        payload = json.dumps(body).encode() if body is not None else b""
        typed = f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n" if body else ""
        request = f"{method} {path} HTTP/1.1\r\nHost: bench\r\n{self.auth}{typed}\r\n".encode() + payload
        started = time.perf_counter()
        try:
            status, data = await self._exchange(request)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            self.close()
            status, data = 0, b""
        self.recorder.add(name, time.perf_counter() - started, 200 <= status < 300)
        return status, json.loads(data or b"{}") if parsed else {}

    async def _exchange(self, request: bytes) -> tuple[int, bytes]:
        if self.streams is None:
            self.streams = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self.streams
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        data = await reader.readexactly(length) if length else b""
        if b"connection: close" in head.lower():
            self.close()
        return int(head.split(b" ", 2)[1]), data

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


Loop = Callable[[int, Callable[[], bool]], Awaitable[None]]


def run_clients(count: int, seconds: float, loop: Loop) -> float:
    """Run `loop(index, stopped)` for `count` clients for `seconds`; returns the elapsed time."""

    async def together() -> float:
        deadline = time.perf_counter() + seconds
        started = time.perf_counter()
        await asyncio.gather(*(loop(i, lambda: time.perf_counter() >= deadline) for i in range(count)))
        return time.perf_counter() - started

    return uvloop.run(together())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def transactions(stack: Stack) -> int:
    """PostgreSQL's count of transactions ended in the stack's database, so far."""
    with stack.db.session() as session:
        ended = "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
        return session.execute(text(ended)).scalar_one()


def run_phase(stack: Stack, count: int, seconds: float, loop: Loop) -> tuple[float, float]:
    """run_clients, and the PostgreSQL transactions per second it caused (the server's statistics lag
    by up to half a second: over 20 s a few percent)."""
    before = transactions(stack)
    elapsed = run_clients(count, seconds, loop)
    time.sleep(1)  # the backends report their counts at most every 0.5 s (PGSTAT_MIN_INTERVAL)
    return elapsed, (transactions(stack) - before) / elapsed


def report(phase: str, recorder: Recorder, elapsed: float, per_second: float) -> dict[str, float]:
    print(f"  {phase:7} PostgreSQL transactions {per_second:8.0f} /s")
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
    parser.add_argument(
        "--queued", type=int, default=20, help="unfinished jobs polled (each re-read about once a second)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="bare, finished and unfinished polls this many times in turn (the machine's speed drifts)",
    )
    args = parser.parse_args()
    # the limiter stays on (its Redis round trip is part of every request) but far above this load
    os.environ["ZOLVE_RATE_LIMIT"] = os.environ["ZOLVE_SUBMIT_RATE_LIMIT"] = "10000000 per minute"

    with Stack(api_workers=args.api_workers) as stack:
        stack.start_worker(concurrency=1)
        job_ids, waiting_ids = uvloop.run(_seed(stack, args.queued))

        async def bare_loop(index: int, stopped: Callable[[], bool], recorder: Recorder) -> None:
            client = Client(stack.port, None, recorder)
            while not stopped():
                await client.call("GET /health", "GET", "/health")
            client.close()

        async def status_loop(
            index: int, stopped: Callable[[], bool], recorder: Recorder, ids: list[str] = job_ids
        ) -> None:
            client = Client(stack.port, stack.key, recorder)
            n = index
            while not stopped():
                await client.call("GET /jobs/{id}", "GET", f"/jobs/{ids[n % len(ids)]}")
                n += 1
            client.close()

        async def submit_loop(index: int, stopped: Callable[[], bool], recorder: Recorder) -> None:
            client = Client(stack.port, stack.key, recorder)
            while not stopped():
                status, job = await client.call("POST /jobs", "POST", "/jobs", TRIVIAL, parsed=True)
                while status in (200, 202) and job.get("state") not in FINAL and not stopped():
                    wait = f"/jobs/{job['id']}?wait=5"
                    status, job = await client.call("GET /jobs/{id}?wait", "GET", wait, parsed=True)
            client.close()

        print(
            f"{args.clients} concurrent clients, {args.seconds:g} s per phase, granian "
            f"{args.api_workers} processes × 8 threads, 1 worker process, all on this machine;"
            " the clients on one event loop"
        )
        ratios: list[tuple[float, float]] = []
        for _ in range(args.rounds):
            bare = Recorder()
            elapsed, xacts = run_phase(
                stack, args.clients, args.seconds, lambda i, s, r=bare: bare_loop(i, s, r)
            )
            bare_rate = report("bare", bare, elapsed, xacts)["GET /health"]
            status = Recorder()
            elapsed, xacts = run_phase(
                stack, args.clients, args.seconds, lambda i, s, r=status: status_loop(i, s, r)
            )
            status_rate = report("status", status, elapsed, xacts)["GET /jobs/{id}"]
            waiting = Recorder()
            elapsed, xacts = run_phase(
                stack, args.clients, args.seconds, lambda i, s, r=waiting: status_loop(i, s, r, waiting_ids)
            )
            waiting_rate = report("queued", waiting, elapsed, xacts)["GET /jobs/{id}"]
            ratios.append((status_rate / bare_rate, waiting_rate / bare_rate))
        submitters = max(1, args.clients // 5)
        own_keys = [stack.new_key() for _ in range(submitters)]

        async def submit_only_loop(index: int, stopped: Callable[[], bool], recorder: Recorder) -> None:
            client = Client(stack.port, own_keys[index], recorder)
            while not stopped():
                await client.call("POST /jobs", "POST", "/jobs", TRIVIAL)
            client.close()

        submits = Recorder()

        async def submits_loop(index: int, stopped: Callable[[], bool]) -> None:
            if index < submitters:
                await submit_only_loop(index, stopped, submits)
            else:
                await status_loop(index, stopped, submits)

        elapsed, xacts = run_phase(stack, args.clients, args.seconds, submits_loop)
        submit_rate = report("submits", submits, elapsed, xacts)["POST /jobs"]
        stack.start_worker(concurrency=1)
        mixed = Recorder()

        async def mixed_loop(index: int, stopped: Callable[[], bool]) -> None:
            await (submit_loop if index < submitters else status_loop)(index, stopped, mixed)

        elapsed, xacts = run_phase(stack, args.clients, args.seconds, mixed_loop)
        report("mixed", mixed, elapsed, xacts)
        print(
            f"  status polls / bare endpoint throughput = {status_rate / bare_rate:.2f}x finished jobs,"
            f" {waiting_rate / bare_rate:.2f}x unfinished"
            f" ({status_rate:.0f}, {waiting_rate:.0f} / {bare_rate:.0f} req/s, the last round)"
        )
        if args.rounds > 1:
            finished, unfinished = (statistics.median(column) for column in zip(*ratios, strict=True))
            each = ", ".join(f"{done:.2f}/{queued:.2f}" for done, queued in ratios)
            print(
                f"  over {args.rounds} rounds (finished/unfinished: {each}), medians:"
                f" {finished:.2f}x finished jobs, {unfinished:.2f}x unfinished"
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


async def _seed(stack: Stack, queued: int) -> tuple[list[str], list[str]]:
    """20 finished jobs, then (the worker stopped) `queued` that stay queued: polls of those read the
    database."""
    seed = Client(stack.port, stack.key, Recorder())
    job_ids = [await _submitted(seed) for _ in range(20)]
    for job_id in job_ids:
        await seed.call("seed", "GET", f"/jobs/{job_id}?wait=10")
    stack.stop_worker()
    waiting_ids = [await _submitted(seed) for _ in range(queued)]
    seed.close()
    return job_ids, waiting_ids


async def _submitted(client: Client) -> str:
    """A trivial job's id."""
    return (await client.call("seed", "POST", "/jobs", TRIVIAL, parsed=True))[1]["id"]


if __name__ == "__main__":
    main()

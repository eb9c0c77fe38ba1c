"""How soon a client knows that its job finished: from the commit of the job's final state to the client
holding it, told by the event stream (SSE), by a webhook, or by a long-poll (`GET /jobs/{id}?wait=`),
all three waiting on the same jobs; and what idle open streams cost the API's /health throughput.

    .venv/bin/python bench/notify.py [--jobs 50] [--streams 100] [--seconds 5]

The commit time is the job's `finished_at` (PostgreSQL's now() in the final transaction, a single short
statement, so within a millisecond or two of its commit), on the same machine's clock as the clients.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from zolve_client import parse_events  # noqa: E402

from bench.stack import Stack  # noqa: E402
from store import keys  # noqa: E402

#: a dice search of about 0.6 s: the clients are all waiting by the time it finishes
JOB = {"kind": "dice", "params": {"dice": 3, "faces": 8}, "fresh": True}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Receiver:
    """A webhook receiver on loopback: when each job's delivery arrived."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.done: dict[str, threading.Event] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                receiver.arrived[body["id"]] = time.time()
                receiver.done.setdefault(body["id"], threading.Event()).set()
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def wait(self, job_id: str, timeout: float = 30) -> float:
        self.done.setdefault(job_id, threading.Event()).wait(timeout)
        return self.arrived[job_id]


def sse_final(url: str, headers: dict[str, str], job_id: str) -> float:
    with requests.get(f"{url}/jobs/{job_id}/events", headers=headers, stream=True, timeout=(5, 60)) as stream:
        stream.encoding = "utf-8"
        for event in parse_events(stream.iter_lines(decode_unicode=True)):
            if event.event in ("succeeded", "failed", "cancelled"):
                return time.time()
    raise RuntimeError(f"the stream of {job_id} ended without a final state")


def long_poll_final(url: str, headers: dict[str, str], job_id: str) -> float:
    session = requests.Session()
    while True:
        job = session.get(f"{url}/jobs/{job_id}", params={"wait": 30}, headers=headers, timeout=60).json()
        if job["state"] in ("succeeded", "failed", "cancelled"):
            return time.time()


def one_job(stack: Stack, headers: dict[str, str], receiver: Receiver, pool: ThreadPoolExecutor) -> dict:
    answer = requests.post(
        f"{stack.url}/jobs", json={**JOB, "callback_url": receiver.url}, headers=headers, timeout=10
    )
    job_id = answer.json()["id"]
    sse = pool.submit(sse_final, stack.url, headers, job_id)
    poll = pool.submit(long_poll_final, stack.url, headers, job_id)
    told = {"sse": sse.result(60), "long-poll": poll.result(60), "webhook": receiver.wait(job_id)}
    finished = requests.get(f"{stack.url}/jobs/{job_id}?wait=1", headers=headers, timeout=10).json()
    committed = datetime.fromisoformat(finished["finished_at"]).timestamp()
    return {how: (at - committed) * 1000 for how, at in told.items()}


def health_rate(url: str, seconds: float, clients: int = 4) -> float:
    stop = time.monotonic() + seconds
    counts = [0] * clients

    def hammer(index: int) -> None:
        session = requests.Session()
        while time.monotonic() < stop:
            if session.get(f"{url}/health", timeout=5).ok:
                counts[index] += 1

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / seconds


def idle_streams_cost(stack: Stack, streams: int, seconds: float) -> tuple[float, float]:
    bare = health_rate(stack.url, seconds)
    with stack.db.session() as session:
        tokens = [keys.create_key(session, name=f"stream {i}").key for i in range(streams // 8 + 1)]
    opened = []
    for index in range(streams):
        headers = {"Authorization": f"Bearer {tokens[index // 8]}"}
        response = requests.get(f"{stack.url}/events", headers=headers, stream=True, timeout=(5, 600))
        if response.status_code != 200:
            raise RuntimeError(f"stream {index} refused: {response.status_code}")
        opened.append(response)
    try:
        with_streams = health_rate(stack.url, seconds)
    finally:
        for response in opened:
            response.close()
    return bare, with_streams


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0, help="per /health throughput measurement")
    args = parser.parse_args()
    env = {
        "ZOLVE_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
        "ZOLVE_RATE_LIMIT": "",
        "ZOLVE_SUBMIT_RATE_LIMIT": "",
        "ZOLVE_MAX_STREAMS": str(args.streams + 8),
    }
    receiver = Receiver()
    with Stack(api_workers=1, env=env) as stack, ThreadPoolExecutor(8) as pool:
        stack.start_worker(2)
        headers = {"Authorization": f"Bearer {stack.key}"}
        one_job(stack, headers, receiver, pool)  # warm up: connections, the event feed, the worker
        samples = [one_job(stack, headers, receiver, pool) for _ in range(args.jobs)]
        bare, with_streams = idle_streams_cost(stack, args.streams, args.seconds)

    print(f"final-state commit → client knows it, {args.jobs} dice jobs (each told all three ways at once)")
    poll = [sample["long-poll"] for sample in samples]
    base50, base95 = statistics.median(poll), percentile(poll, 0.95)
    print(f"  {'how':10} {'p50 ms':>8} {'p95 ms':>8} {'p50 / long-poll':>16} {'p95 / long-poll':>16}")
    for how in ("sse", "webhook", "long-poll"):
        values = [sample[how] for sample in samples]
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        print(f"  {how:10} {p50:8.1f} {p95:8.1f} {p50 / base50:16.2f} {p95 / base95:16.2f}")
    print(
        f"/health throughput (4 clients, {args.seconds:g} s each): {bare:,.0f} req/s bare, "
        f"{with_streams:,.0f} req/s with {args.streams} idle open streams ({with_streams / bare:.2f}x)"
    )


if __name__ == "__main__":
    main()

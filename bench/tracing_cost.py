"""What tracing costs (issue 67): the same work with tracing off (no OTEL_ variable) and on (OTLP over HTTP
to a sink on this machine that answers every export at once), in turns, in one run:

1. the expert enumeration through `zolve up --workers 2` (submit → succeeded, by the job's own
   created → finished), `--rounds` times each way, the two alternating;
2. `bench/api_load.py` (its status polls and submits against bare /health, `--seconds` per phase), once
   each way, and once more with a tenth of the requests traced (OTEL_TRACES_SAMPLER_ARG=0.1).

Prints each figure off and on, and on ÷ off; and how many spans and bytes the sink took.

    .venv/bin/python bench/tracing_cost.py [--rounds 2] [--seconds 15] [--clients 50] [--skip-api-load]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stack import UpStack  # noqa: E402

EXPERT = {"kind": "planetx.enumerate", "params": {"mode": "expert"}, "fresh": True}
#: api_load's summary lines: "... = 0.70x finished jobs, 0.71x unfinished (4534, 4624 / 6497 req/s)" and
#: "submits beside 40 pollers: 255/s from 10 keys, p99 67 ms = ..."
POLLS = re.compile(
    r"throughput = ([\d.]+)x finished jobs, ([\d.]+)x unfinished \((\d+), (\d+) / (\d+) req/s\)"
)
SUBMITS = re.compile(r"submits beside \d+ pollers: (\d+)/s from \d+ keys, p99 (\d+) ms")


class Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that keeps nothing: 200 to every export, counting requests and bytes."""

    exports = 0
    received = 0

    def do_POST(self) -> None:  # noqa: N802 - the handler's name is http.server's
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        Sink.exports += 1
        Sink.received += length
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def tracing_env(mode: str, sink_port: int) -> dict[str, str]:
    """off; on (every request traced); `on 10%` (OTEL_TRACES_SAMPLER_ARG=0.1)."""
    if mode == "off":
        return {"OTEL_TRACES_EXPORTER": "none"}
    traced = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink_port}"}
    return {**traced, "OTEL_TRACES_SAMPLER_ARG": "0.1"} if mode == "on 10%" else traced


def expert_seconds(env: dict[str, str]) -> float:
    with UpStack(workers=2, env=env) as stack:
        headers = {"Authorization": f"Bearer {stack.key}"}
        job = requests.post(f"{stack.url}/jobs", json=EXPERT, headers=headers, timeout=30).json()
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            job = requests.get(f"{stack.url}/jobs/{job['id']}?wait=30", headers=headers, timeout=60).json()
            if job["state"] not in ("queued", "running"):
                break
        if job["state"] != "succeeded":
            raise RuntimeError(f"the expert enumeration ended {job['state']}: {job.get('error')}")
        took = datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["created_at"])
        return took.total_seconds()


def api_load(env: dict[str, str], seconds: float, clients: int) -> dict[str, float]:
    command = [sys.executable, str(ROOT / "bench" / "api_load.py"), "--seconds", str(seconds)]
    command += ["--clients", str(clients)]
    done = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    polls, submits = POLLS.search(done.stdout), SUBMITS.search(done.stdout)
    if polls is None or submits is None:
        raise RuntimeError(f"api_load's summary not found:\n{done.stdout[-2000:]}")
    return {
        "finished polls (req/s)": float(polls.group(3)),
        "unfinished polls (req/s)": float(polls.group(4)),
        "bare /health (req/s)": float(polls.group(5)),
        "polls ÷ bare": float(polls.group(1)),
        "submits (/s)": float(submits.group(1)),
        "submit p99 (ms)": float(submits.group(2)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--skip-api-load", action="store_true")
    args = parser.parse_args()
    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    port = sink.server_address[1]

    expert: dict[str, list[float]] = {"off": [], "on": []}
    for round_ in range(args.rounds):
        for mode in ("off", "on") if round_ % 2 == 0 else ("on", "off"):
            expert[mode].append(expert_seconds(tracing_env(mode, port)))
            print(f"expert enumeration, tracing {mode}: {expert[mode][-1]:.1f} s", flush=True)
    spans_after_expert = (Sink.exports, Sink.received)
    print()
    print("| measure | tracing off | tracing on | on ÷ off |")
    print("|---|---|---|---|")
    off, on = statistics.median(expert["off"]), statistics.median(expert["on"])
    print(
        f"| expert enumeration, submit → succeeded (median of {args.rounds}) | {off:.1f} s | {on:.1f} s "
        f"| {on / off:.2f}× |",
        flush=True,
    )
    if not args.skip_api_load:
        modes = ("off", "on", "on 10%")
        loads = {mode: api_load(tracing_env(mode, port), args.seconds, args.clients) for mode in modes}
        print()
        print("| api_load | tracing off | on | on ÷ off | on, 10% of requests traced | ÷ off |")
        print("|---|---|---|---|---|---|")
        for name in loads["off"]:
            before, after, sampled = (loads[mode][name] for mode in modes)
            cells = [
                f"{before:g}",
                f"{after:g}",
                f"{after / before:.2f}×",
                f"{sampled:g}",
                f"{sampled / before:.2f}×",
            ]
            print(f"| {name} | {' | '.join(cells)} |")
    print(
        f"\nthe sink took {spans_after_expert[0]} exports ({spans_after_expert[1] / 2**20:.1f} MiB) "
        f"during the enumerations, {Sink.exports} ({Sink.received / 2**20:.1f} MiB) in all"
    )


if __name__ == "__main__":
    main()

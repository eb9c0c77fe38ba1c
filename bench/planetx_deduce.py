"""How fast a Planet X deduction answers: in-process for both modes (boards already in memory), and
through the running service once the standard enumeration is stored, against the same machine's bare
/health round trip and the in-process figure. Also the seed-style brute force (every board checked in
plain Python) as a baseline for the numpy filter.

    .venv/bin/python bench/planetx_deduce.py [--calls 20] [--expert-service]

`--expert-service` also stores the expert enumeration through the service first (several minutes).
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
from puzzles.planetx import deduce  # noqa: E402
from puzzles.planetx.board import MODES, decode  # noqa: E402
from puzzles.planetx.boardset import all_boards  # noqa: E402
from puzzles.planetx.observations import parse_all  # noqa: E402
from puzzles.runtime import Run  # noqa: E402

OBSERVATIONS = {
    "none": [],
    "survey+target": [
        {"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 2},
        {"type": "target", "sector": 3, "seen": "empty"},
    ],
    "clues": [
        {"type": "survey", "object": "empty", "first": 2, "last": 5, "count": 1},
        {
            "type": "clue",
            "relation": "adjacent",
            "quantifier": "none",
            "subject": "gas_cloud",
            "object": "comet",
        },
        {
            "type": "clue",
            "relation": "within",
            "quantifier": "all",
            "distance": 2,
            "subject": "planet_x",
            "object": "asteroid",
        },
    ],
}


def timed(action, calls: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(calls):
        started = time.perf_counter()
        value = action()
        times.append(time.perf_counter() - started)
    return statistics.median(times), value


def in_process(mode: str, calls: int) -> dict[str, float]:
    with Run(600) as run:
        started = time.perf_counter()
        everything = all_boards(MODES[mode], run)
        load = time.perf_counter() - started
        print(f"{mode}: {len(everything):,} boards enumerated in-process in {load:.2f} s (once per process)")
        figures = {}
        for name, observations in OBSERVATIONS.items():
            params = {"mode": mode, "observations": observations}
            seconds, result = timed(lambda p=params: deduce.solve(p, run), calls)
            figures[name] = seconds
            print(f"  deduce [{name:13}] median {seconds * 1000:8.1f} ms  → {result['boards']:,} boards")
        parsed = parse_all(MODES[mode], OBSERVATIONS["clues"])
        boards = [decode(int(c), MODES[mode].sectors) for c in everything.codes]
        started = time.perf_counter()
        kept = sum(all(o.holds(MODES[mode], b) for o in parsed) for b in boards)
        brute = time.perf_counter() - started
        started = time.perf_counter()
        fast = len(deduce.remaining_boards(everything, parsed))
        numpy_filter = time.perf_counter() - started
        assert kept == fast
        print(
            f"  filter [clues] plain Python over every board {brute * 1000:.1f} ms,"
            f" numpy {numpy_filter * 1000:.1f} ms = {brute / numpy_filter:.0f}x faster"
        )
    return figures


def wait(http: requests.Session, url: str, job: dict) -> dict:
    while job["state"] not in ("succeeded", "failed", "cancelled"):
        job = http.get(f"{url}/jobs/{job['id']}?wait=10").json()
    assert job["state"] == "succeeded", job
    return job


def through_service(stack: Stack, mode: str, calls: int, baseline: dict[str, float]) -> None:
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {stack.key}"
    started = time.perf_counter()
    wait(
        http,
        stack.url,
        http.post(stack.url + "/jobs", json={"kind": "planetx.enumerate", "params": {"mode": mode}}).json(),
    )
    print(f"{mode}: enumeration stored through the service in {time.perf_counter() - started:.1f} s")
    health, _ = timed(lambda: http.get(stack.url + "/health").raise_for_status(), calls)
    for name, observations in OBSERVATIONS.items():
        body = {"kind": "planetx.deduce", "params": {"mode": mode, "observations": observations}}
        first = time.perf_counter()
        job = wait(http, stack.url, http.post(stack.url + "/jobs", json=body).json())
        first = time.perf_counter() - first
        assert job["result"]["source"] == "stored", job["result"]["source"]
        seconds, _ = timed(
            lambda b=body: wait(http, stack.url, http.post(stack.url + "/jobs", json=b).json()), calls
        )
        print(
            f"  service deduce [{name:13}] median {seconds * 1000:8.1f} ms (first call {first * 1000:.0f} ms)"
            f" = {seconds / baseline[name]:.1f}x in-process, {seconds / health:.0f}x bare /health"
            f" ({health * 1000:.1f} ms)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--expert-service", action="store_true")
    args = parser.parse_args()
    standard = in_process("standard", args.calls)
    expert = in_process("expert", max(3, args.calls // 4))
    with Stack(api_workers=1) as stack:
        stack.start_worker(concurrency=1)
        through_service(stack, "standard", args.calls, standard)
        if args.expert_service:
            through_service(stack, "expert", max(3, args.calls // 4), expert)


if __name__ == "__main__":
    main()

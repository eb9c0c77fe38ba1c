"""Leaving Earth: every recorded `les` case planned one by one in this process, then all of them as one batch
through the service (granian API, 2 worker processes, PostgreSQL, Redis), beside `les`' recorded seconds.

The objective check: for every case the plan's (cost, time, mass) must equal `les`' (or be better on the
lexicographic key) and the exit code must match.

    .venv/bin/python bench/leaving_earth_batch.py [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402
from puzzles.leaving_earth.planner import plan  # noqa: E402
from puzzles.runtime import Run  # noqa: E402
from schemas.leaving_earth import PlanParams  # noqa: E402
from zolve.commands.les import les, les_params  # noqa: E402

CASES = Path(__file__).resolve().parent.parent / "tests" / "puzzles" / "data" / "les_cases.json"


def case_params(args: list[str]) -> dict[str, Any]:
    """The job params `zolve les` would send for these arguments."""
    context = les.make_context("les", list(args))
    return les_params(context.params)


def key_of(result: dict[str, Any] | None) -> tuple[int, int, int] | None:
    if not result or result.get("status") != "optimal":
        return None
    return result["cost"], result["time"], result["mass"]


def expected_key(case: dict[str, Any]) -> tuple[int, int, int] | None:
    output = case["output"]
    return (output["cost"], output["time"], output["mass"]) if isinstance(output, dict) else None


def in_process(cases: list[dict[str, Any]]) -> list[tuple[float, Any]]:
    timings = []
    for case in cases:
        params = case_params(case["args"])
        started = time.perf_counter()
        try:
            loaded = PlanParams().load(params)
        except Exception:
            timings.append((time.perf_counter() - started, None))
            continue
        with Run(time_limit=120) as run:
            result = plan(loaded, run)
        timings.append((time.perf_counter() - started, key_of(result)))
    return timings


def through_service(stack: Stack, cases: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {stack.key}"
    items = [{"client_id": str(case["id"]), "params": case_params(case["args"])} for case in cases]
    started = time.perf_counter()
    response = http.post(stack.url + "/batches", json={"items": items}, timeout=30)
    response.raise_for_status()
    location = stack.url + response.headers["Location"] + f"?limit={len(items)}"
    while True:
        batch = http.get(location, timeout=30).json()
        if batch["done"]:
            return time.perf_counter() - started, batch
        time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="batch runs (the median is reported)")
    args = parser.parse_args()
    cases = json.loads(CASES.read_text())
    les_total = sum(case["seconds"] for case in cases)

    local = in_process(cases)
    print(f"{'case':<48} {'les s':>7} {'zolve s':>8} {'speed-up':>8}  les (cost,time,mass) → zolve")
    mismatches = 0
    for case, (seconds, key) in zip(cases, local, strict=True):
        expected = expected_key(case)
        worse = key != expected and (key is None or expected is None or key > expected)
        mismatches += worse
        print(
            f"{' '.join(case['args'])[:48]:<48} {case['seconds']:>7.3f} {seconds:>8.3f} "
            f"{case['seconds'] / seconds:>7.1f}x  {expected} → {key}{'  WORSE' if worse else ''}"
        )
    local_total = sum(seconds for seconds, _ in local)
    print(f"\nin-process, one by one: {local_total:.3f} s for {len(cases)} cases; les: {les_total:.3f} s")
    print(f"  ratio les / zolve = {les_total / local_total:.1f}x; cases worse than les: {mismatches}")

    with Stack() as stack:
        stack.start_worker(concurrency=args.workers)
        through_service(stack, cases[:3])  # warm the worker processes' imports
        runs = []
        for _ in range(args.rounds):
            seconds, batch = through_service(stack, cases)
            runs.append(seconds)
        keys = {item["client_id"]: key_of(item["result"]) for item in batch["items"]}
        disagree = [
            case["id"] for case, (_, key) in zip(cases, local, strict=True) if keys[str(case["id"])] != key
        ]
        median = statistics.median(runs)
        print(
            f"\nbatch of {len(cases)} through the service, {args.workers} workers: "
            f"{[round(r, 3) for r in runs]} s, median {median:.3f} s"
        )
        print(
            f"  counts: {batch['counts']}; jobs: {batch['job_count']}; "
            f"disagreeing with in-process: {disagree}"
        )
        print(f"  ratio les / batch = {les_total / median:.1f}x (goal: 10x)")


if __name__ == "__main__":
    main()

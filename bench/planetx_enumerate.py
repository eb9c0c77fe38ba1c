"""Planet X enumeration, all in one run on this machine, as ratios (issue 39):

1. in-process, one core: the check–model–block loop (a fresh QF_FD context per shard, as before issue 39),
   the user-propagator walk (`puzzles.allmodels`, one long-lived solver) and the plain-Python enumerator
   (`rules.enumerate_boards`), in boards/s; every shard of the walk checked against the reference;
2. the shard depth, measured: plan + walk + histogram over the whole mode at several depths;
3. the job through the service (`bench/stack.py`: PostgreSQL, Redis, the API, one worker of N processes),
   submit → every board stored, median of `--service-runs`.

    .venv/bin/python bench/planetx_enumerate.py [--mode expert] [--repeat 3] [--old-every 8]
        [--depths 3,4,5] [--service-runs 1] [--service-depths 4,5] [--workers 2]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path

import requests
import z3

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402
from puzzles.planetx import enumerate as planetx  # noqa: E402
from puzzles.planetx.board import LETTERS, MODES, Mode  # noqa: E402
from puzzles.planetx.rules import enumerate_boards  # noqa: E402
from puzzles.planetx.solver import BoardModel, board_walker, enumerate_models  # noqa: E402
from puzzles.runtime import Run  # noqa: E402


def digest(codes: list[int]) -> str:
    return hashlib.sha256(",".join(map(str, sorted(codes))).encode()).hexdigest()[:16]


def prefix(key: str) -> list[int]:
    return [LETTERS.index(letter) for letter in key]


def plan(mode: Mode, depth: int) -> tuple[list[str], float]:
    started = time.perf_counter()
    with Run(600) as run:
        keys = planetx.plan({"mode": mode.name, "shard_depth": depth}, run)
    return keys, time.perf_counter() - started


def walk_shards(mode: Mode, keys: list[str]) -> tuple[dict[str, list[int]], dict[str, float], int]:
    """Every shard through the propagator walk (the kind's `enumerate_shard`): rows and seconds per shard,
    and how many boards Z3 met again (blocked again, not recorded)."""
    rows, seconds, repeats = {}, {}, 0
    walker = board_walker(mode)
    with Run(3600) as run:
        for key in keys:
            started = time.perf_counter()
            fixed = [walker.model.at(index + 1, obj) for index, obj in enumerate(prefix(key))]
            walk = walker.walker.walk(run, fixed)
            seconds[key] = time.perf_counter() - started
            assert walk.complete
            rows[key], repeats = walk.values, repeats + walk.repeats
    return rows, seconds, repeats


def blocking_loop(mode: Mode, key: str) -> list[int]:
    """One shard the way it ran before issue 39: a fresh context, the rules, a blocking clause per model."""
    with Run(3600) as run:
        model = BoardModel(mode, run.context())
        model.fix(prefix(key))
        outcome = enumerate_models(model, run)
    assert outcome.complete
    return outcome.codes


def best_of(repeat: int, mode: Mode, keys: list[str]) -> tuple[float, list[int], float, dict, int]:
    """The plain-Python enumerator and the walk, interleaved `repeat` times; the fastest of each (the
    run least disturbed by whatever else shares the cores)."""
    reference_seconds, walk_seconds = float("inf"), float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        reference = enumerate_boards(mode)
        reference_seconds = min(reference_seconds, time.perf_counter() - started)
        rows, seconds, repeats = walk_shards(mode, keys)
        if sum(seconds.values()) < walk_seconds:
            walk_seconds, best = sum(seconds.values()), (rows, seconds, repeats)
    return reference_seconds, reference, walk_seconds, best[1], best[2]


def in_process(mode: Mode, depth: int, old_every: int, repeat: int) -> None:
    keys, plan_seconds = plan(mode, depth)
    reference_seconds, reference, walk_seconds, seconds, repeats = best_of(repeat, mode, keys)
    rows, _, _ = walk_shards(mode, keys)
    walked = [code for codes in rows.values() for code in codes]
    assert len(walked) == len(set(walked)) == len(reference) and digest(walked) == digest(reference)
    bad = [key for key in keys if digest(rows[key]) != digest(enumerate_boards(mode, prefix=prefix(key)))]
    assert not bad, bad
    sample = keys[::old_every]
    old_seconds, old_boards = 0.0, 0
    for key in sample:
        began = time.perf_counter()
        codes = blocking_loop(mode, key)
        old_seconds += time.perf_counter() - began
        assert digest(codes) == digest(rows[key]), key
        old_boards += len(codes)
    new_on_sample = old_boards / sum(seconds[key] for key in sample)
    old_rate, new_rate = old_boards / old_seconds, len(walked) / walk_seconds
    with_plan = len(walked) / (walk_seconds + plan_seconds)
    reference_rate = len(reference) / reference_seconds
    print(
        f"1. in-process, one core, {mode.name}: {len(reference):,} boards, depth {depth} ({len(keys)} shards)"
    )
    print("   every shard of the walk = the plain-Python enumerator's (count and sha256 of the sorted codes)")
    print(f"   the walk met {repeats} boards again (blocked again, counted once)")
    print(f"   blocking-clause loop, every {old_every}th shard ({old_boards:,}) : {old_rate:9,.0f} boards/s")
    print(
        f"   propagator walk, the same shards             : {new_on_sample:9,.0f} boards/s"
        f" = {new_on_sample / old_rate:5.1f}x the loop"
    )
    print(
        f"   propagator walk, every shard (best of {repeat})    : {new_rate:9,.0f} boards/s"
        f" ({with_plan:,.0f} with planning, {plan_seconds:.2f} s)"
    )
    print(f"   plain-Python enumerator (best of {repeat})         : {reference_rate:9,.0f} boards/s")
    print(
        f"   plain-Python / walk = {reference_rate / new_rate:.2f}x; walk / loop = {new_rate / old_rate:.1f}x"
    )


def depths(mode: Mode, candidates: list[int]) -> None:
    print(f"2. shard depth, {mode.name}: plan + walk + histogram of every shard, one core")
    for depth in candidates:
        keys, plan_seconds = plan(mode, depth)
        started = time.perf_counter()
        rows, _, _ = walk_shards(mode, keys)
        walk_seconds = time.perf_counter() - started
        started = time.perf_counter()
        for codes in rows.values():
            planetx.histogram(mode, codes)
        histogram_seconds = time.perf_counter() - started
        total = sum(len(codes) for codes in rows.values())
        seconds = plan_seconds + walk_seconds + histogram_seconds
        print(
            f"   depth {depth}: {len(keys):5,} shards, largest {max(map(len, rows.values())):6,},"
            f" plan {plan_seconds:5.2f} s, walk {walk_seconds:6.1f} s, histogram {histogram_seconds:4.2f} s"
            f" = {total / seconds:8,.0f} boards/s"
        )


def through_service(stack: Stack, mode: str, depth: int, runs: int) -> list[tuple[float, int]]:
    """Submit → succeeded, `runs` times: (seconds, boards) each."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {stack.key}"
    results = []
    for _ in range(runs):
        started = time.perf_counter()
        params = {"mode": mode, "shard_depth": depth, "max_shard_boards": 100_000}
        job = http.post(
            stack.url + "/jobs", json={"kind": "planetx.enumerate", "params": params, "fresh": True}
        )
        job = job.json()
        while job["state"] not in ("succeeded", "failed", "cancelled"):
            job = http.get(f"{stack.url}/jobs/{job['id']}?wait=30").json()
        assert job["state"] == "succeeded", job
        results.append((time.perf_counter() - started, job["result"]["count"]))
    return results


def service(mode: Mode, workers: int, runs: int, shard_depths: list[int]) -> None:
    print(f"3. through the service, {workers} worker processes, submit → every board stored:")
    with Stack(api_workers=1) as stack:
        stack.start_worker(concurrency=workers)
        for depth in shard_depths:
            results = through_service(stack, mode.name, depth, runs)
            seconds = statistics.median(s for s, _ in results)
            counts = sorted({count for _, count in results})
            each = ", ".join(f"{s:.1f}" for s, _ in results)
            print(
                f"   depth {depth}: runs {each} s; median {seconds:.1f} s"
                f" = {max(counts) / seconds:,.0f} boards/s; counts {counts}"
            )
        stack.stop_worker()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="expert", choices=list(MODES))
    parser.add_argument("--depth", type=int, default=4, help="shard depth of part 1")
    parser.add_argument("--old-every", type=int, default=8, help="the blocking loop runs every Nth shard")
    parser.add_argument("--depths", default="3,4,5", help="part 2's depths ('' skips it)")
    parser.add_argument("--service-runs", type=int, default=1, help="0 skips part 3")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="part 1: best of this many interleaved runs")
    parser.add_argument("--service-depths", default="4,5", help="part 3: the shard depths to run")
    args = parser.parse_args()
    mode = MODES[args.mode]
    print(f"z3 {z3.get_version_string()}")
    in_process(mode, args.depth, args.old_every, args.repeat)
    if args.depths:
        depths(mode, [int(d) for d in args.depths.split(",")])
    if args.service_runs:
        service(mode, args.workers, args.service_runs, [int(d) for d in args.service_depths.split(",")])


if __name__ == "__main__":
    main()

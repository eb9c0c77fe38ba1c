"""A `mastermind.play` job through the service, in this checkout and in a baseline revision, taking turns:
how long the job takes and how many shards its slices made of it.

    .venv/bin/python bench/sliced_games.py [--baseline REV] [--games 200] [--rounds 2]

Each run is a private stack (embedded PostgreSQL and Redis, the API, a worker of 2 processes:
bench/stack.py) on the code of the tree measured, so a cold worker's first game (its tables built) falls in
the first shard, as it does for the first job on a new worker. The games are the same sample in both trees.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: this script, run in either tree (on that tree's code: its PYTHONPATH) to measure it
SCRIPT = Path(__file__).resolve()


def measure(games: int, slice_seconds: float) -> dict[str, float]:
    import requests

    from bench.stack import Stack

    with Stack(api_workers=1, env={"ZOLVE_SHARD_SLICE_SECONDS": str(slice_seconds)}) as stack:
        stack.start_worker(2)
        headers = {"Authorization": f"Bearer {stack.key}"}
        params = {"n": 4, "k": 6, "secrets": {"sample": games, "seed": 3}}
        body = {"kind": "mastermind.play", "params": params}
        began = time.monotonic()
        job = requests.post(f"{stack.url}/jobs", json=body, headers=headers, timeout=30).json()
        while job["state"] not in ("succeeded", "failed", "cancelled"):
            job = requests.get(f"{stack.url}/jobs/{job['id']}?wait=5", headers=headers, timeout=30).json()
        took = time.monotonic() - began
    if job["state"] != "succeeded":
        raise SystemExit(f"the job ended {job['state']}: {job.get('error')}")
    shards = (job.get("progress") or {}).get("shards_total") or 0
    return {"seconds": took, "shards": float(shards), "average": job["result"]["avg_turns"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="e083ceb", help="the revision to compare with")
    parser.add_argument("--games", type=int, default=200, help="secrets sampled (4 pegs, 6 colours)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--slice",
        type=float,
        default=3.0,
        help="ZOLVE_SHARD_SLICE_SECONDS; below a cold first game's time, as a loaded machine's 3 s is",
    )
    parser.add_argument(
        "--load",
        type=int,
        default=0,
        help="busy processes beside both runs (a machine shared with other work)",
    )
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:  # in the tree measured, on its code
        print(json.dumps(measure(args.games, args.slice)))
        return
    sys.path.insert(0, str(SCRIPT.parent.parent))
    from bench.trees import ROOT, measured_in, worktree

    runs: dict[str, list[dict[str, float]]] = {"baseline": [], "this": []}
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    with (
        contextlib.ExitStack() as cleanup,
        tempfile.TemporaryDirectory() as tmp,
        worktree(args.baseline, Path(tmp)) as tree,
    ):
        cleanup.callback(lambda: [process.kill() for process in busy])
        for round_ in range(args.rounds):
            for name, where in (("baseline", tree), ("this", ROOT)):
                measuring = ["--measure", "--games", str(args.games), "--slice", str(args.slice)]
                last = measured_in(where, SCRIPT, measuring)
                runs[name].append(last)
                print(f"  round {round_ + 1} {name:8} {last['seconds']:7.1f} s, {last['shards']:.0f} shards")
    before, after = (statistics.median(r["seconds"] for r in runs[tree]) for tree in ("baseline", "this"))
    same = {r["average"] for r in runs["baseline"] + runs["this"]}
    print(
        f"mastermind.play, {args.games} games; baseline {args.baseline}; medians of {args.rounds} rounds;"
        f" {args.load} busy processes beside; slices of {args.slice:g} s"
    )
    print(f"  the job   baseline {before:7.1f} s  this {after:7.1f} s  {before / after:5.2f}x faster")
    print(f"  the same games (average turns): {sorted(same)}")


if __name__ == "__main__":
    main()

"""Taiji: zolve's solver on the 16 example puzzles of bench/taiji_examples.json (Taiji Maker editor test
data), in-process, against the seed solver's measured times stored with them.

For each puzzle: the wall time to a first solution (`unique: false`) and with the uniqueness check
(`unique: true`), the median of `--repeat` runs each. Every answer is checked with the independent rule
checker and the uniqueness verdict against the stored one. The seed (benediktwerner/taiji-z3-solver) ran
with a 90 s limit: a puzzle it did not finish counts as 90 s (a lower bound of its time), and the one where
it returned a grid the rules reject counts as 0 s (no time was recorded), so the ratio is conservative.

    .venv/bin/python bench/taiji.py [--repeat 3] [--time-limit 90]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles.runtime import Run  # noqa: E402
from puzzles.taiji.code import parse_code  # noqa: E402
from puzzles.taiji.rules import is_valid  # noqa: E402
from puzzles.taiji.solver import solve  # noqa: E402

EXAMPLES = Path(__file__).with_name("taiji_examples.json")
SEED_LIMIT = 90.0


def timed_solve(code: str, unique: bool, time_limit: float) -> tuple[float, dict]:
    started = time.perf_counter()
    with Run(time_limit) as run:
        result = solve({"code": code, "unique": unique}, run)
    return time.perf_counter() - started, result


def measure(example: dict, repeat: int, time_limit: float) -> tuple[float, float]:
    """Median seconds to a first solution and with the uniqueness check; fails loudly on a wrong answer."""
    puzzle = parse_code(example["code"])
    first, full = [], []
    for _ in range(repeat):
        seconds, result = timed_solve(example["code"], False, time_limit)
        assert result["status"] == "solved" and is_valid(puzzle, result["solution"]), example["id"]
        first.append(seconds)
        seconds, result = timed_solve(example["code"], True, time_limit)
        assert result["valid"] and result["unique"] is example["unique_up_to_flip"], example["id"]
        full.append(seconds)
    return statistics.median(first), statistics.median(full)


def seed_seconds(example: dict) -> tuple[float, str]:
    """The seed's time as counted in the totals, and as shown."""
    if example["seed_solver_seconds"] is not None:
        return example["seed_solver_seconds"], f"{example['seed_solver_seconds']:.3f}"
    if "did not finish" in (example["seed_solver_note"] or ""):
        return SEED_LIMIT, f"DNF (≥{SEED_LIMIT:g} s)"
    return 0.0, "invalid grid"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3, help="runs per puzzle and mode (median reported)")
    parser.add_argument("--time-limit", type=float, default=90.0, help="zolve's limit per solve, seconds")
    args = parser.parse_args()

    examples = json.loads(EXAMPLES.read_text())["puzzles"]
    print(f"{'puzzle':8} {'size':>5}  {'features':24} {'first s':>8} {'unique s':>9}  {'seed s':>14}")
    rows = []
    for example in examples:
        first, full = measure(example, args.repeat, args.time_limit)
        seed, seed_text = seed_seconds(example)
        size = f"{example['width']}×{example['height']}"
        features = ", ".join(example["features"])
        print(
            f"{example['id']:8} {size:>5}  {features:24} {first:8.3f} {full:9.3f}  {seed_text:>14}",
            flush=True,
        )
        rows.append((first, full, seed, example["seed_solver_seconds"] is not None))
    first, full, seed = (sum(row[i] for row in rows) for i in range(3))
    print(f"{'total':40} {first:8.3f} {full:9.3f}  {seed:14.3f}")
    print(f"\nseed total: a DNF counts as {SEED_LIMIT:g} s, the invalid grid as 0 s")
    solved = [row for row in rows if row[3]]
    buckets = [(f"all {len(rows)} puzzles", rows), (f"the {len(solved)} the seed solved", solved)]
    for label, bucket in buckets:
        first, full, seed = (sum(row[i] for row in bucket) for i in range(3))
        print(
            f"  {label:24} seed / zolve = {seed / first:6.1f}x to a first solution, "
            f"{seed / full:6.1f}x with the uniqueness check (which the seed never does)"
        )


if __name__ == "__main__":
    main()

"""What the proof of Mastermind's expected-case optimum costs (`puzzles/mastermind/optimal.Search`), each
size searched three ways in the same run:

* baseline: the search before issue 68 — equal partitions found by sorting the rows, parts bounded by the
  static bound of their size alone (here: every hash made to collide, so each set falls back to the sort);
* hashed: equal partitions found by hashing the rows (checked row by row), the static bound;
* dynamic: hashed, and each part of 12 codes or more bounded by its best one-guess split before its
  siblings are solved (the default).

All must find the same total, and the tree must play every secret in that total; the bench checks both.

    .venv/bin/python bench/mastermind_optimal.py [--sizes 4x5,5x4,3x8,6x3,4x6] [--only-new 4x7,3x9]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles.mastermind import optimal  # noqa: E402

#: dynamic_from past any set: the floor of a part is the static bound by its size
STATIC = 1 << 30
WAYS = ("baseline", "hashed", "dynamic")


def timed(n: int, k: int, way: str) -> tuple[int, float, int]:
    """The optimum's total, the seconds to prove it and the sets searched."""
    original = optimal._hash_weights
    if way == "baseline":
        optimal._hash_weights = lambda width: np.zeros(width, dtype=np.int64)
    try:
        started = time.perf_counter()
        search = optimal.Search(n, k) if way == "dynamic" else optimal.Search(n, k, dynamic_from=STATIC)
        total = search.optimum()
        seconds = time.perf_counter() - started
    finally:
        optimal._hash_weights = original
    played = optimal.check(search.tree(), n, k)
    if played["total"] != total:
        raise SystemExit(f"{n}x{k} {way}: the tree plays {played['total']} guesses, the search found {total}")
    return total, seconds, search.nodes


def sizes(text: str) -> list[tuple[int, int]]:
    return [(int(n), int(k)) for n, k in (size.split("x") for size in text.split(",") if size)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="4x5,5x4,3x8,6x3,4x6", help="sizes searched all three ways")
    parser.add_argument("--only-new", default="", help="sizes searched the default way only (4x7)")
    args = parser.parse_args()
    print(f"{'size':>5} {'total':>7} {'avg':>7}" + "".join(f" {way + ' s':>11} {'sets':>7}" for way in WAYS))
    print(f"{'':>21} ratios to the baseline's seconds: hashed, dynamic")
    for n, k in sizes(args.sizes):
        runs = {way: timed(n, k, way) for way in WAYS}
        if len({total for total, _, _ in runs.values()}) != 1:
            raise SystemExit(f"{n}x{k}: the ways found different optima: {runs}")
        total = runs["dynamic"][0]
        cells = "".join(f" {seconds:>11.1f} {sets:>7}" for _, seconds, sets in runs.values())
        base = runs["baseline"][1]
        ratios = f"  {base / runs['hashed'][1]:.1f}×, {base / runs['dynamic'][1]:.1f}×"
        print(f"{n}x{k:<3} {total:>7} {total / k**n:>7.4f}{cells}{ratios}", flush=True)
    for n, k in sizes(args.only_new):
        total, seconds, sets = timed(n, k, "dynamic")
        dashes = f"{'-':>12}{'-':>8}" * 2
        print(f"{n}x{k:<3} {total:>7} {total / k**n:>7.4f}{dashes} {seconds:>11.1f} {sets:>7}")


if __name__ == "__main__":
    main()

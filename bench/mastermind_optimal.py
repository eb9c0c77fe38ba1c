"""What the proof of Mastermind's expected-case optimum costs (`puzzles/mastermind/optimal.Search`): each
size searched with the dynamic floor (parts bounded by their best one-guess split before their siblings are
solved, the default) and, as the baseline, with the static bound by size alone, in the same run. Both must
find the same total; the bench checks it, and that the tree plays every secret in that total.

    .venv/bin/python bench/mastermind_optimal.py [--sizes 4x5,5x4,3x8,4x6] [--baseline-sizes ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles.mastermind.optimal import Search, check  # noqa: E402

#: dynamic_from past any set: the floor of a part is the static bound by its size
STATIC = 1 << 30


def timed(n: int, k: int, dynamic_from: int | None) -> tuple[int, float, int]:
    """The optimum's total, the seconds to prove it and the sets searched."""
    started = time.perf_counter()
    search = Search(n, k) if dynamic_from is None else Search(n, k, dynamic_from=dynamic_from)
    total = search.optimum()
    seconds = time.perf_counter() - started
    played = check(search.tree(), n, k)
    if played["total"] != total:
        raise SystemExit(f"{n}x{k}: the tree plays {played['total']} guesses, the search found {total}")
    return total, seconds, search.nodes


def sizes(text: str) -> list[tuple[int, int]]:
    return [(int(n), int(k)) for n, k in (size.split("x") for size in text.split(",") if size)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="4x5,5x4,3x8,4x6", help="sizes searched both ways")
    parser.add_argument("--only-new", default="", help="sizes searched with the dynamic floor only (4x7)")
    args = parser.parse_args()
    print(f"{'size':>5} {'total':>7} {'avg':>7} {'static s':>9} {'sets':>8}", end="")
    print(f" {'dynamic s':>10} {'sets':>8} {'speed-up':>9}")
    for n, k in sizes(args.sizes):
        total, fast, fast_sets = timed(n, k, None)
        base_total, slow, slow_sets = timed(n, k, STATIC)
        if base_total != total:
            raise SystemExit(f"{n}x{k}: the baseline found {base_total}, the dynamic floor {total}")
        print(
            f"{n}x{k:<3} {total:>7} {total / k**n:>7.4f} {slow:>9.1f} {slow_sets:>8}"
            f" {fast:>10.1f} {fast_sets:>8} {slow / fast:>8.1f}×",
            flush=True,
        )
    for n, k in sizes(args.only_new):
        total, fast, fast_sets = timed(n, k, None)
        print(f"{n}x{k:<3} {total:>7} {total / k**n:>7.4f} {'-':>9} {'-':>8} {fast:>10.1f} {fast_sets:>8}")


if __name__ == "__main__":
    main()

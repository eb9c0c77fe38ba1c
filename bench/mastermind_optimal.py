"""What the proof of Mastermind's expected-case optimum costs (`puzzles/mastermind/optimal.Search`), each
size searched three ways in the same run:

* baseline: `python -m puzzles.mastermind.optimal` at `--baseline REV` (default: the search before issue 68,
  which sorted rows to find equal partitions and bounded each part by its size alone), in a git worktree;
* static: this tree's search with each part bounded by its size alone (`dynamic_from` past every set);
* dynamic: this tree's search as it ships (each part of 12 codes or more bounded by its best one-guess split
  before its siblings are solved).

All must find the same total, and this tree's must play every secret in that total (the bench checks both);
each time is the search's own (the feedback table built, the search run; not the interpreter's start).

    .venv/bin/python bench/mastermind_optimal.py [--sizes 4x5,5x4,3x8,6x3,4x6] [--only-new 4x7,3x9]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.trees import worktree  # noqa: E402
from puzzles.mastermind import optimal  # noqa: E402

#: the last commit before issue 68 changed the search
BASELINE = "1f10e53"
#: dynamic_from past any set: the floor of a part is the static bound by its size
STATIC = 1 << 30
PRINTED = re.compile(r"total (\d+) over .* search ([\d.]+) s, (\d+) sets searched")


def in_tree(tree: Path, n: int, k: int) -> tuple[int, float, int]:
    """The total, seconds and sets `python -m puzzles.mastermind.optimal` prints, run in `tree`."""
    done = subprocess.run(
        [sys.executable, "-m", "puzzles.mastermind.optimal", "--n", str(n), "--k", str(k)],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    found = PRINTED.search(done.stdout)
    if done.returncode != 0 or found is None:
        raise SystemExit(
            f"the search at {n}x{k} in {tree} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return int(found[1]), float(found[2]), int(found[3])


def here(n: int, k: int, dynamic_from: int = optimal.DYNAMIC_FROM) -> tuple[int, float, int]:
    """The total, seconds and sets of this tree's search (its tree checked against every secret)."""
    started = time.perf_counter()
    search = optimal.Search(n, k, dynamic_from=dynamic_from)
    total = search.optimum()
    seconds = time.perf_counter() - started
    played = optimal.check(search.tree(), n, k)
    if played["total"] != total:
        raise SystemExit(f"{n}x{k}: the tree plays {played['total']} guesses, the search found {total}")
    return total, seconds, search.nodes


def sizes(text: str) -> list[tuple[int, int]]:
    return [(int(n), int(k)) for n, k in (size.split("x") for size in text.split(",") if size)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="4x5,5x4,3x8,6x3,4x6", help="sizes searched all three ways")
    parser.add_argument("--only-new", default="", help="sizes searched as shipped only (4x7)")
    parser.add_argument("--baseline", default=BASELINE, help="the revision of the baseline")
    args = parser.parse_args()
    ways = ("baseline", "static", "dynamic")
    print(f"{'size':>5} {'total':>7} {'avg':>7}" + "".join(f" {way + ' s':>11} {'sets':>7}" for way in ways))
    print(f"{'':>21} ratios of seconds: baseline ÷ dynamic, static ÷ dynamic")
    with tempfile.TemporaryDirectory() as tmp, worktree(args.baseline, Path(tmp)) as tree:
        for n, k in sizes(args.sizes):
            runs = {"baseline": in_tree(tree, n, k), "static": here(n, k, STATIC), "dynamic": here(n, k)}
            if len({total for total, _, _ in runs.values()}) != 1:
                raise SystemExit(f"{n}x{k}: the ways found different optima: {runs}")
            total, fast = runs["dynamic"][0], runs["dynamic"][1]
            cells = "".join(f" {seconds:>11.1f} {sets:>7}" for _, seconds, sets in runs.values())
            ratios = f"  {runs['baseline'][1] / fast:.1f}×, {runs['static'][1] / fast:.1f}×"
            print(f"{n}x{k:<3} {total:>7} {total / k**n:>7.4f}{cells}{ratios}", flush=True)
    for n, k in sizes(args.only_new):
        total, seconds, sets = here(n, k)
        dashes = f"{'-':>12}{'-':>8}" * 2
        print(f"{n}x{k:<3} {total:>7} {total / k**n:>7.4f}{dashes} {seconds:>11.1f} {sets:>7}", flush=True)


if __name__ == "__main__":
    main()

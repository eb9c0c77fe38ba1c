"""How long a `zolve` command takes to start and finish when it needs no service: `zolve --help` (which
lists the kinds' command groups, so it loads every kind) and `zolve config`. Each command runs
`--rounds` times in this checkout and, with `--baseline REV`, as often in a git worktree of that revision,
the two taking turns; prints each tree's median and the ratio this tree ÷ baseline.

    .venv/bin/python bench/cli_startup.py [--rounds 10] [--baseline REV]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.trees import worktree  # noqa: E402

COMMANDS = (["--help"], ["config"])


def seconds_to_run(tree: Path, command: list[str]) -> float:
    """One run of `python -m zolve COMMAND` on `tree`'s code (and its client library's)."""
    env = {**os.environ, "PYTHONPATH": f"{tree}:{tree / 'client'}"}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "zolve", *command], cwd=tree, env=env, check=True, capture_output=True
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--baseline", default="", help="a git revision to measure too, in a worktree")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zolve-bench-cli-") as tmp, contextlib.ExitStack() as trees_made:
        trees = {"this tree": ROOT}
        if args.baseline:
            trees[args.baseline] = trees_made.enter_context(worktree(args.baseline, Path(tmp)))
        for command in COMMANDS:
            times: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.rounds):  # the trees take turns: a machine's drift falls on both
                for name, tree in trees.items():
                    times[name].append(seconds_to_run(tree, command))
            medians = {name: statistics.median(values) for name, values in times.items()}
            line = "   ".join(f"{name}: {median:.2f} s" for name, median in medians.items())
            if args.baseline:
                line += f"   this tree ÷ baseline {medians['this tree'] / medians[args.baseline]:.2f}x"
            print(f"zolve {' '.join(command):8} median of {args.rounds}: {line}")


if __name__ == "__main__":
    main()

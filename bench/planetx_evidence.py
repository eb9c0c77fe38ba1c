"""Planet X games, this checkout against a baseline revision, paired game by game: the same boards and
clues (same seed), the default policy, the player not told which generator dealt the game. What changed
between the two is what the player makes of the clues (issue 68: the weighted generator's redraws weighed
in full, and a first conference clue weighed before the second is read), so the days each game took are
compared one to one: the mean change with its 95% interval, and how many games got shorter or longer.

    .venv/bin/python bench/planetx_evidence.py [--baseline be41bca] [--games 2000] [--expert-games 500]
        [--seed 31]

The baseline runs in a git worktree of its own (`bench/trees.py`); both trees play their games in-process
on every core, one after the other.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.paired import paired  # noqa: E402
from bench.trees import ROOT, figures_of, worktree  # noqa: E402

GENERATORS = ("uniform", "weighted")

#: run in either tree (its own code on the path): every game's days, as JSON on the last line
PLAY = """
import json, sys
from puzzles.planetx import simulate
from puzzles.runtime import Run
mode, model, games, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
params = {"mode": mode, "games": games, "seed": seed, "clue_model": model, "sample_games": games}
with Run(24 * 3600) as run:
    result = simulate.solve(params, run)
print(json.dumps({"days": [game["days"] for game in result["sample"]]}))
"""


def days_in(tree: Path, mode: str, model: str, games: int, seed: int) -> list[int]:
    command = [sys.executable, "-c", PLAY, mode, model, str(games), str(seed)]
    days: list[int] = figures_of(command, tree, {**os.environ, "PYTHONPATH": str(tree)})["days"]
    return days


def report(mode: str, model: str, before: list[int], after: list[int]) -> None:
    change = [b - a for a, b in zip(before, after, strict=True)]
    old, new = statistics.fmean(before), statistics.fmean(after)
    print(
        f"  {mode:8} {model:8} {len(change):6} {old:8.2f} {new:7.2f} {new / old:6.3f}x {paired(change)}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="be41bca")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--expert-games", type=int, default=500)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    print(f"seed {args.seed}; baseline {args.baseline}; days per game, paired (the same games in both trees)")
    print(
        f"  {'mode':8} {'dealt by':8} {'games':>6} {'baseline':>8} {'this':>7} {'ratio':>7}"
        f" {'change':>7} {'95%':>6} {'shorter':>7} {'longer':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp, worktree(args.baseline, Path(tmp)) as tree:
        for mode, games in (("standard", args.games), ("expert", args.expert_games)):
            for model in GENERATORS if games else ():
                before = days_in(tree, mode, model, games, args.seed)
                after = days_in(ROOT, mode, model, games, args.seed)
                report(mode, model, before, after)


if __name__ == "__main__":
    main()

"""Days to locate Planet X by policy, over many simulated games on random boards, against the seed's
published figure (survey-only, about 30 days) and the survey-only policy re-run here on the same boards.

    .venv/bin/python bench/planetx_simulate.py [--games 3000] [--expert-games 0]

Games run in-process on every core (the same code the `planetx.simulate` kind shards over workers).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles.planetx import simulate  # noqa: E402
from puzzles.runtime import Run  # noqa: E402

SEED_DAYS = 30.0  # the seed's survey-only average ("about 30 days")


def play(mode: str, policy: str, games: int, seed: int) -> tuple[dict, float]:
    params = {"mode": mode, "games": games, "seed": seed, "policy": policy}
    started = time.perf_counter()
    with Run(24 * 3600) as run:
        result = simulate.solve(params, run)
    return result, time.perf_counter() - started


def report(mode: str, games: int, seed: int) -> None:
    print(f"{mode}: {games} games, seed {seed}, the same boards for every policy")
    print(
        f"  {'policy':12} {'avg':>6} {'median':>6} {'max':>4} {'vs survey-only':>14} {'vs seed ~30':>11}"
        f" {'s/game':>7}  actions per game"
    )
    baseline = None
    for policy in simulate.POLICIES:
        result, seconds = play(mode, policy, games, seed)
        baseline = baseline or result["avg_days"]
        mix = ", ".join(f"{k} {v:.2f}" for k, v in result["action_mix"].items())
        print(
            f"  {policy:12} {result['avg_days']:6.2f} {result['median_days']:6.1f} {result['max_days']:4d}"
            f" {result['avg_days'] / baseline:13.2f}x {result['avg_days'] / SEED_DAYS:10.2f}x"
            f" {seconds / games:7.4f}  {mix}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--expert-games", type=int, default=0)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    report("standard", args.games, args.seed)
    if args.expert_games:
        report("expert", args.expert_games, args.seed)


if __name__ == "__main__":
    main()

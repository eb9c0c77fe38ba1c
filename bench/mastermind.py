"""Mastermind strategies against the seed's SAT AI, 6 colours, in process on every core:

    .venv/bin/python bench/mastermind.py [--lengths 4,8,16] [--games 60] [--long-games 25]
                                         [--strategies consistent,best] [--seed 1]

n = 4 plays all 1296 secrets (and Knuth's minimax as well); longer codes play `--games` random secrets,
`--long-games` from n = 12 up. `consistent` is the seed's method (any code that fits, from the same SAT
encoding). Every row goes through puzzles.mastermind.play, the in-process form of the `mastermind.play` kind.
Prints n, strategy, games, average and worst turns, seconds per game (one core), the seed's published
average and the ratio to it. The default run takes about 4 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles import mastermind  # noqa: E402
from puzzles.runtime import Run  # noqa: E402

COLOURS = 6
#: the seed's SAT AI, average turns by code length (6 colours)
SEED_AVERAGE = {4: 4.659, 5: 5.100, 6: 5.572, 7: 6.072, 8: 6.560, 9: 7.237, 10: 7.901, 16: 10.51}


def secrets_for(n: int, games: int, long_games: int, seed: int) -> str | dict[str, int]:
    if n == 4:
        return "all"
    return {"sample": games if n < 12 else long_games, "seed": seed}


def play(n: int, strategy: str, secrets: str | dict[str, int], seed: int) -> tuple[dict, float]:
    params = {"n": n, "k": COLOURS, "strategy": strategy, "secrets": secrets, "seed": seed}
    started = time.perf_counter()
    with Run() as run:
        result = mastermind.play(params, run)
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="4,8,16", help="code lengths, comma-separated")
    parser.add_argument("--games", type=int, default=60, help="random secrets per length below 12")
    parser.add_argument("--long-games", type=int, default=25, help="random secrets per length from 12")
    parser.add_argument("--strategies", default="consistent,best")
    parser.add_argument("--seed", type=int, default=1, help="seeds the secrets and the strategies")
    args = parser.parse_args()

    header = f"{'n':>3} {'strategy':<11} {'games':>6} {'avg':>6} {'max':>4} {'s/game':>7} {'wall s':>7}"
    print(header + f" {'seed avg':>8} {'ratio':>6}")
    for n in (int(length) for length in args.lengths.split(",")):
        strategies = args.strategies.split(",") + (["minimax"] if n == 4 else [])
        secrets = secrets_for(n, args.games, args.long_games, args.seed)
        for strategy in strategies:
            result, wall = play(n, strategy, secrets, args.seed)
            seed_avg = SEED_AVERAGE.get(n)
            ratio = f"{result['avg_turns'] / seed_avg:6.3f}" if seed_avg else f"{'-':>6}"
            print(
                f"{n:>3} {strategy:<11} {result['games_count']:>6} {result['avg_turns']:>6.3f}"
                f" {result['max_turns']:>4} {result['seconds_per_game']:>7.3f} {wall:>7.1f}"
                f" {seed_avg or '-':>8} {ratio}",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""What ranking a Planet X player's actions costs: `actions.score` over every legal action, on the states
where expert games begin (every board of the mode, weighed by the research pairs shown), with keys of a
small range counted in one pass (`np.bincount`, the default) against sorting them (`np.unique`, the
baseline), in the same run. Both give the same floats; the bench checks it.

    .venv/bin/python bench/planetx_score.py [--games 4] [--rounds 3] [--mode expert]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles.planetx import boardset, simulate  # noqa: E402
from puzzles.planetx.actions import Scores, score  # noqa: E402
from puzzles.planetx.board import MODES  # noqa: E402
from puzzles.planetx.boardset import BoardSet, all_boards  # noqa: E402
from puzzles.runtime import Run  # noqa: E402


def timed(states: list[tuple[BoardSet, list]], dense: bool, rounds: int) -> tuple[float, list[Scores]]:
    """The median over rounds of the seconds to score every state, and the last round's scores."""
    original = boardset._dense
    if not dense:
        boardset._dense = lambda keys: False
    try:
        seconds, scores = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            scores = [score(boards, actions) for boards, actions in states]
            seconds.append(time.perf_counter() - started)
    finally:
        boardset._dense = original
    return statistics.median(seconds), scores


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="expert")
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with Run(3600) as run:
        everything = all_boards(MODES[args.mode], run)
        states = []
        for index in range(args.games):
            game = simulate.new_game(everything, index * 7919 % len(everything), "research", [index], [])
            boards = simulate._start(game, everything)
            states.append((boards, simulate.candidates("research", game, boards)))
    actions = sum(len(a) for _, a in states)
    print(f"{args.mode}: {args.games} opening states, {len(everything):,} boards, {actions} actions scored")
    sorting, expected = timed(states, dense=False, rounds=args.rounds)
    counting, found = timed(states, dense=True, rounds=args.rounds)
    same = all(
        np.array_equal(a.goal_bits, b.goal_bits) and np.array_equal(a.bits, b.bits)
        for a, b in zip(expected, found, strict=True)
    )
    print(f"  sorting keys (baseline) {sorting:7.2f} s   1.00x")
    ratio = sorting / counting
    print(f"  counting keys           {counting:7.2f} s   {ratio:.2f}x faster, same scores: {same}")


if __name__ == "__main__":
    main()

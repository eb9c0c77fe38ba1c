"""What ranking a Planet X player's actions costs: `actions.score` over every legal action, on the states
where expert games begin (every board of the mode, weighed by the research pairs shown), with keys of a
small range counted in one pass (`np.bincount`, the default) against sorting them (`np.unique`, the
baseline), in the same run. Both give the same floats; the bench checks it.

    .venv/bin/python bench/planetx_score.py [--games 4] [--rounds 3] [--mode expert]

With `--baseline REV`, this checkout against that revision instead (in a git worktree), each round one
tree after the other, each in a process of its own on one core (the board set loaded and every topic's
truth found before the clock starts): the seconds to score the same states, and the seconds whole games
of the mode take (`--play` of them, seed 31, the uniform generator), whose scores and days must match.

    .venv/bin/python bench/planetx_score.py --baseline cc68471 [--play 6] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.trees import TIMED_GAMES, print_medians, taking_turns  # noqa: E402
from puzzles.planetx import boardset, simulate  # noqa: E402
from puzzles.planetx.actions import AnyAction, Scores, score  # noqa: E402
from puzzles.planetx.board import MODES  # noqa: E402
from puzzles.planetx.boardset import BoardSet, all_boards  # noqa: E402
from puzzles.runtime import Run  # noqa: E402


def timed(
    states: list[tuple[BoardSet, list[AnyAction]]], dense: bool, rounds: int
) -> tuple[float, list[Scores]]:
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


#: run in either tree (its own code on the path): scoring's seconds and a digest of the scores, then the
#: games' seconds and days, as JSON on the last line
MEASURE = (
    """
import hashlib, json, sys, time
from puzzles.planetx import simulate
from puzzles.planetx.actions import score
from puzzles.planetx.board import MODES
from puzzles.planetx.boardset import all_boards
from puzzles.runtime import Run
"""
    + TIMED_GAMES
    + """
mode, states_wanted, games = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
params = {"mode": mode, "seed": 31, "clue_model": "uniform"}
with Run(24 * 3600) as run:
    everything = all_boards(MODES[mode], run)
    states = []
    for index in range(states_wanted):
        game = simulate.new_game(everything, index * 7919 % len(everything), "research", [index], [])
        boards = simulate._start(game, everything)
        states.append((boards, simulate.candidates("research", game, boards)))
    for boards, actions in states:  # every topic's truth, found once per process
        score(boards, actions)
    digest = hashlib.sha256()
    began = time.perf_counter()
    for boards, actions in states:
        scores = score(boards, actions)
        digest.update(scores.bits.tobytes() + scores.goal_bits.tobytes())
    scoring = time.perf_counter() - began
    played, days = timed_games(everything, run, params, games, warm=range(games))
print(json.dumps({"scoring": scoring, "digest": digest.hexdigest(), "games": played, "days": days}))
"""
)


def against(baseline: str, mode: str, states: int, games: int, rounds: int) -> None:
    """This checkout against `baseline`: scoring and whole games, medians of `rounds`."""
    args = [mode, str(states), str(games)]
    runs = taking_turns(baseline, MEASURE, args, rounds, ["scoring", "games"])
    first, second = runs["baseline"][0], runs["this"][0]
    same = first["digest"] == second["digest"] and first["days"] == second["days"]
    print(f"{mode}: {states} opening states scored and {games} games (seed 31, uniform), one core each;")
    print(f"baseline {baseline}; medians of {rounds} rounds; the same scores and days: {same}")
    print_medians(runs, {"scoring": "scoring the states", "games": "whole games"})
    if not same:
        raise SystemExit("the two trees disagree")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="expert")
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline")
    parser.add_argument("--play", type=int, default=6)
    args = parser.parse_args()
    if args.baseline:
        against(args.baseline, args.mode, args.games, args.play, args.rounds)
        return
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

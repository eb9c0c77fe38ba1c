"""The weighted clue model's guarantee (`WeightedModel.guarantee_likelihood`), this checkout against a
baseline revision in the same run: the seconds it takes on expert boards, and the seconds whole expert games
take, the same games in both trees (their days must match, and the likelihoods be the same numbers).

    .venv/bin/python bench/planetx_guarantee.py [--baseline 0fea22d] [--deals 2] [--games 6] [--rounds 3]

Each round runs the baseline, then this checkout, each in a process of its own on one core (the board set
loaded and every topic's truth found before the clock starts); the medians of the rounds are compared.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.trees import TIMED_GAMES, print_medians, taking_turns  # noqa: E402

#: run in either tree (its own code on the path): the guarantee's seconds and a digest of its values, then
#: the games' seconds and days, as JSON on the last line
MEASURE = (
    """
import hashlib, json, sys, time
import numpy as np
from puzzles.planetx import simulate
from puzzles.planetx.board import MODES
from puzzles.planetx.boardset import all_boards
from puzzles.planetx.generators import MODELS, Streams
from puzzles.planetx.observations import parse
from puzzles.runtime import Run
"""
    + TIMED_GAMES
    + """
deals, games = int(sys.argv[1]), int(sys.argv[2])
weighted = MODELS["weighted"]
mode = MODES["expert"]
with Run(24 * 3600) as run:
    everything = all_boards(mode, run)
    states = []
    for seed in range(deals):
        row = int(np.random.default_rng([seed, 0]).integers(len(everything)))
        streams = Streams(np.random.default_rng([seed, 1]), np.random.default_rng([seed, 2]))
        dealt = weighted.deal(streams, everything, row, 2)
        first = parse(mode, dealt.conferences[0]).mask(mode, everything.grid)
        boards = everything.subset(np.flatnonzero(first)[::8])  # an eighth of the boards X1 leaves
        letters = sorted(dealt.pairs)
        for known in (1, 3):
            heard = [dealt.statements[letter] for letter in letters[:known]]
            unheard = [dealt.pairs[letter] for letter in letters[known:]]
            for shown in (dealt.conferences[:1], dealt.conferences):
                states.append((boards, shown, heard, unheard))
    for boards, shown, heard, unheard in states:  # every topic's truth, found once per process
        weighted.guarantee_likelihood(boards.subset(np.arange(8)), shown, heard, unheard, 2)
    digest = hashlib.sha256()
    began = time.perf_counter()
    for boards, shown, heard, unheard in states:
        digest.update(weighted.guarantee_likelihood(boards, shown, heard, unheard, 2).tobytes())
    guarantee = time.perf_counter() - began
    params = {"mode": "expert", "seed": 31, "clue_model": "weighted"}
    played, days = timed_games(everything, run, params, games, warm=[games])
print(json.dumps({"guarantee": guarantee, "calls": len(states), "digest": digest.hexdigest(),
                  "games": played, "days": days}))
"""
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="0fea22d")
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [str(args.deals), str(args.games)]
    runs = taking_turns(args.baseline, MEASURE, sizes, args.rounds, ["guarantee", "games"])
    first, second = runs["baseline"][0], runs["this"][0]
    same = first["digest"] == second["digest"] and first["days"] == second["days"]
    calls, games = first["calls"], args.games
    print(f"expert boards, {calls} guarantee calls and {games} weighted games (seed 31), one core each;")
    print(f"baseline {args.baseline}; medians of {args.rounds} rounds; the same likelihoods and days: {same}")
    print_medians(runs, {"guarantee": "guarantee_likelihood", "games": "whole games"})
    if not same:
        raise SystemExit("the two trees disagree")


if __name__ == "__main__":
    main()

"""What a Planet X process spends before and beside its games: every research and conference topic's truth
over the whole board set (both clue models), and whole games from a cold process, this checkout against a
baseline revision in the same run. The boards and truths must be the same bits and the games the same days.

    .venv/bin/python bench/planetx_setup.py [--baseline 3a4fe44] [--mode expert] [--games 3] [--rounds 3]

Every process runs in one tree on its own code, numpy on one thread, and first enumerates the mode's
boards (`rules.enumerate_boards`, as a worker without a stored enumeration does). First `--rounds` rounds
of cold processes, each round the baseline then this checkout: each times the enumeration (`cold
boards`) and plays `--games` games (seed 31, the uniform generator, the player not told) finding only
the topics they need as they go (`cold games`: what a simulate job's first shard in a new worker process
waits). Then as many rounds of processes that find every topic (`topics`) and then play the same games
(`games`). Medians of the rounds are compared, and each process's peak memory (its maximum resident
set). The boards are compared by a digest of the set (sorted), the truths widened to 64 bits.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.trees import TIMED_GAMES, Runs, print_medians, taking_turns  # noqa: E402

#: run in either tree (its own code on the path): with "warm", every topic's seconds and a digest of their
#: truths, then the games' seconds and days; with "cold", the games' seconds and days only; JSON, last line
MEASURE = (
    """
import hashlib, json, resource, sys, time
from puzzles.planetx import clues, simulate
from puzzles.planetx.board import MODES
from puzzles.planetx.boardset import all_boards
from puzzles.planetx.generators import MODELS, PAIRS
from puzzles.runtime import Run
"""
    + TIMED_GAMES
    + """
mode, games, warm = MODES[sys.argv[1]], int(sys.argv[2]), sys.argv[3] == "warm"
figures = {}
with Run(24 * 3600) as run:
    began = time.perf_counter()
    everything = all_boards(mode, run)
    if not warm:
        figures["cold boards"] = time.perf_counter() - began
    figures["boards digest"] = hashlib.sha256(everything.codes.tobytes()).hexdigest()
    if warm:
        began = time.perf_counter()
        topics = [clues.conference_topic(everything), MODELS["weighted"].conference_topic(everything)]
        topics += [model.topic(everything, pair) for model in MODELS.values() for pair in PAIRS]
        figures["topics"] = time.perf_counter() - began
        digest = hashlib.sha256()
        for topic in topics:
            digest.update(topic.truth.astype("u8").tobytes())  # whatever width a tree keeps it in
            digest.update(repr(topic.statements).encode())
        figures["digest"] = digest.hexdigest()
    params = {"mode": mode.name, "seed": 31, "clue_model": "uniform"}
    seconds, days = timed_games(everything, run, params, games, warm=[])
    figures["games" if warm else "cold games"] = seconds
    figures["days"] = days
    figures["peak MB" if warm else "cold peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(figures))
"""
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="3a4fe44")
    parser.add_argument("--mode", default="expert", choices=["standard", "expert"])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [args.mode, str(args.games)]
    cold = taking_turns(args.baseline, MEASURE, [*sizes, "cold"], args.rounds, ["cold boards", "cold games"])
    warm = taking_turns(args.baseline, MEASURE, [*sizes, "warm"], args.rounds, ["topics", "games"])
    runs: Runs = {tree: [{**c, **w} for c, w in zip(cold[tree], warm[tree], strict=True)] for tree in cold}
    days = {tuple(r["days"]) for tree in runs.values() for r in tree}
    digests = {r["digest"] for tree in runs.values() for r in tree}
    boards = {r["boards digest"] for tree in runs.values() for r in tree}
    same = len(days) == 1 and len(digests) == 1 and len(boards) == 1
    print(f"{args.mode} boards, every topic of both clue models and {args.games} games (seed 31), one core;")
    print(f"baseline {args.baseline}; medians of {args.rounds} rounds; same boards, truths and days: {same}")
    parts = {
        "cold boards": "enumerating the boards",
        "topics": "every topic",
        "games": "games, topics found",
        "cold games": "games from cold",
    }
    print_medians(runs, parts)
    for part, what in (("cold peak MB", "peak memory, cold"), ("peak MB", "peak memory, every topic")):
        before, after = (statistics.median(r[part] for r in runs[tree]) for tree in ("baseline", "this"))
        print(f"  {what:24} baseline {before:5.0f} MB  this {after:5.0f} MB  {after / before:5.2f}x")
    days_per_game = statistics.fmean(next(iter(days))) if days else 0
    print(f"  days a game {days_per_game:.2f}")
    if not same:
        raise SystemExit("the two trees disagree")


if __name__ == "__main__":
    main()

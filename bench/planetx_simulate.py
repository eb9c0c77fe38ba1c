"""Days to locate Planet X by policy, over many simulated games on random boards, against the seed's
published figure (survey-only, about 30 days) and the survey-only policy re-run here on the same boards.
The policies without research play the game without conferences (as first measured) and `goal` also with
them, so what research adds is seen apart from what the free conference clues add. With clues heard, the
player either weighs each board by how likely the game was to show them there (`weigh_clues`, the default)
or takes them as plain facts; both are reported.

    .venv/bin/python bench/planetx_simulate.py [--games 3000] [--expert-games 0]

With `--levels`, the default policy instead, per clue generator (`clue_model`: uniform, weighted) and
difficulty (the starting facts dealt), the player not told which generator dealt the game (it weighs
both), with the mean's 95% interval; and, at genius, the same games with the player told (the
baseline: what not knowing costs):

    .venv/bin/python bench/planetx_simulate.py --levels --games 2000 --expert-games 500 --seed 31

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


#: (policy, conferences, weigh_clues) in the order reported; weighing only matters with clues heard
RUNS = [
    ("survey-only", False, False),
    ("entropy", False, False),
    ("goal", False, False),
    ("goal", True, False),
    ("goal", True, True),
    ("research", True, False),
    ("research", True, True),
]


def play(mode: str, policy: str, conferences: bool, weigh: bool, games: int, seed: int) -> tuple[dict, float]:
    params = {"mode": mode, "games": games, "seed": seed, "policy": policy, "conferences": conferences}
    params["weigh_clues"] = weigh
    started = time.perf_counter()
    with Run(24 * 3600) as run:
        result = simulate.solve(params, run)
    return result, time.perf_counter() - started


def report(mode: str, games: int, seed: int, runs: list[tuple[str, bool, bool]]) -> None:
    print(f"{mode}: {games} games, seed {seed}, the same boards (and conference clues) for every policy")
    print(
        f"  {'policy':12} {'conf.':5} {'weigh':5} {'avg':>6} {'median':>6} {'max':>4} {'vs first':>8}"
        f" {'vs goal':>7} {'vs seed ~30':>11} {'s/game':>7}  actions per game"
    )
    baseline = goal = None
    for policy, conferences, weigh in runs:
        result, seconds = play(mode, policy, conferences, weigh, games, seed)
        baseline = baseline or result["avg_days"]
        if policy == "goal" and not conferences:
            goal = result["avg_days"]
        mix = ", ".join(f"{k} {v:.2f}" for k, v in result["action_mix"].items())
        versus_goal = f"{result['avg_days'] / goal:6.2f}x" if goal else f"{'':7}"
        print(
            f"  {policy:12} {'yes' if conferences else 'no':5} {'yes' if weigh else 'no':5}"
            f" {result['avg_days']:6.2f}"
            f" {result['median_days']:6.1f} {result['max_days']:4d} {result['avg_days'] / baseline:7.2f}x"
            f" {versus_goal} {result['avg_days'] / SEED_DAYS:10.2f}x {seconds / games:7.4f}  {mix}",
            flush=True,
        )


def level(mode: str, games: int, seed: int, extra: dict) -> tuple[dict, float]:
    params = {"mode": mode, "games": games, "seed": seed, **extra}
    started = time.perf_counter()
    with Run(24 * 3600) as run:
        result = simulate.solve(params, run)
    return result, time.perf_counter() - started


def report_levels(mode: str, games: int, seed: int, difficulties: list[str], with_told: bool = True) -> None:
    print(f"{mode}: {games} games, seed {seed}, policy research; the same boards per generator and level")
    print(
        f"  {'generator':9} {'difficulty':11} {'told':5} {'avg':>6} {'95%':>6} {'median':>6} {'max':>4}"
        f" {'vs told':>7} {'model right':>11} {'s/game':>7}"
    )
    for model in ("uniform", "weighted"):
        told: float | None = None
        for difficulty in difficulties:
            for known in (True, False) if with_told and difficulty == "genius" else (False,):
                extra = {"clue_model": model, "difficulty": difficulty, "clue_model_known": known}
                result, seconds = level(mode, games, seed, extra)
                if known:
                    told = result["avg_days"]
                right = "" if known else f"{result['model_identified'] / games:.1%}"
                versus = f"{result['avg_days'] / told:6.3f}x" if told and not known else f"{'':7}"
                print(
                    f"  {model:9} {difficulty:11} {'yes' if known else 'no':5} {result['avg_days']:6.2f}"
                    f" {result['avg_days_ci95']:6.2f} {result['median_days']:6.1f} {result['max_days']:4d}"
                    f" {versus} {right:>11} {seconds / games:7.4f}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--expert-games", type=int, default=0)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--levels", action="store_true", help="generators × difficulties (see above)")
    parser.add_argument("--difficulties", default="genius,experienced,beginner,youth")
    parser.add_argument("--expert-difficulties", default="genius")
    parser.add_argument("--no-told", action="store_true", help="--levels: no told baseline (half the games)")
    args = parser.parse_args()
    if args.levels:
        if args.games:
            report_levels("standard", args.games, args.seed, args.difficulties.split(","), not args.no_told)
        if args.expert_games:
            difficulties = args.expert_difficulties.split(",")
            report_levels("expert", args.expert_games, args.seed, difficulties, not args.no_told)
        return
    report("standard", args.games, args.seed, RUNS)
    if args.expert_games:  # the seed's policies take minutes a game on expert: the goal policies only
        report("expert", args.expert_games, args.seed, RUNS[2:])


if __name__ == "__main__":
    main()

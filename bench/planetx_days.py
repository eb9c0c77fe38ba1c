"""Where a Planet X game's days go, and whether changing one move would have saved any.

Part 1, the days: the default policy's games under each clue generator (the player not told which dealt
the game), days per game by what they were spent on (research, surveys, targets, the locate that finds
Planet X, wrong locates), the day of the first locate, and how often a locate named the right triple by
the probability the player gave it.

Part 2, one-step deviations (standard games only: each game is replayed once per move changed): at
every decision of a game, the same game (same board, same clues) is played again with that one move
changed and the policy left to play the rest:
- `act instead of locating`: a locate of a triple not yet certain replaced by the policy's preferred action;
- `locate instead of acting`: an action replaced by a locate, where the likeliest triple has at least 30%;
- `runner-up instead`: the preferred action replaced by the policy's second choice of the same kind
  (research by the next topic, a survey or target by the next survey or target);
- `survey instead of research`: research replaced by the preferred survey or target.
Each row is the deviation's days less the game's own, mean and 95% interval over the decisions changed:
below zero, the policy leaves days there; above, the move it made was the better one.

Part 3, what two of the rules cost the policy (each game played again with a rule lifted, the same
policy deciding; paired against the game as dealt; also the wrong locates per game of each):
- `whole sky visible`: surveys and targets of any sector at any time, as if the sky did not turn;
- `conference on day 0`: the conference clues read at the start (the same clues; standard reads its one
  on day 9, expert its two on days 6 and 15).
Neither is a game anyone plays: a policy that planned perfectly around the rule could save at most about
what lifting it saves, so they size what planning around the sky or the conference may still buy.

    .venv/bin/python bench/planetx_days.py [--games 2000] [--expert-games 0] [--deviation-games 300]
        [--lifted-games 0] [--lifted-expert-games 0]

Games run in-process on every core; deviations are played in a pool of processes, one game per task.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.paired import paired  # noqa: E402
from puzzles.planetx import simulate  # noqa: E402
from puzzles.planetx.actions import (  # noqa: E402
    LOCATE_DAYS,
    MAX_TARGETS,
    RESEARCH_DAYS,
    TARGET_DAYS,
    AnyAction,
    Research,
    legal_actions,
    research_actions,
    score,
    survey_days,
)
from puzzles.planetx.board import MODES  # noqa: E402
from puzzles.planetx.boardset import BoardSet, all_boards  # noqa: E402
from puzzles.runtime import Run  # noqa: E402

MODELS = ("uniform", "weighted")
LOCATE_AT_LEAST = 0.3  # `locate instead of acting` only where the likeliest triple has this much
KINDS = (
    "act instead of locating",
    "locate instead of acting",
    "runner-up instead",
    "survey instead of research",
)


def move_days(move: dict[str, Any], sectors: int) -> tuple[str, int]:
    """What a recorded move was spent on, and its days."""
    if move["type"] == "survey":
        return "survey", survey_days((move["last"] - move["first"]) % sectors + 1)
    return move["type"], {"research": RESEARCH_DAYS, "target": TARGET_DAYS, "locate": LOCATE_DAYS}[
        move["type"]
    ]


def where_days_go(mode: str, games: int, seed: int) -> None:
    sectors = MODES[mode].sectors
    print(
        f"{mode}: {games} games per generator, seed {seed}, the player not told the generator; days per game"
    )
    print(
        f"  {'generator':9} {'avg':>6} {'95%':>5} {'research':>8} {'surveys':>7} {'targets':>7} {'locate':>6}"
        f" {'wrong':>6} {'wrong/game':>10} {'1st locate':>10}  right by the named triple's probability"
    )
    for model in MODELS:
        params = {"mode": mode, "games": games, "seed": seed, "clue_model": model, "sample_games": games}
        with Run(24 * 3600) as run:
            result = simulate.solve(params, run)
        spent: dict[str, float] = defaultdict(float)
        first_locates = []
        for game in result["sample"]:
            for move in game["moves"]:
                kind, days = move_days(move, sectors)
                spent[kind] += days
            first_locates.append(next(m["day"] for m in game["moves"] if m["type"] == "locate"))
        wrong = result["wrong_locates"] * LOCATE_DAYS
        per_game = {kind: days / games for kind, days in spent.items()}
        print(
            f"  {model:9} {result['avg_days']:6.2f} {result['avg_days_ci95']:5.2f}"
            f" {per_game.get('research', 0):8.2f} {per_game.get('survey', 0):7.2f}"
            f" {per_game.get('target', 0):7.2f}"
            f" {(spent['locate'] - wrong) / games:6.2f} {wrong / games:6.2f}"
            f" {result['wrong_locates'] / games:10.3f}"
            f" {statistics.fmean(first_locates):10.2f}  {calibration(result['sample'])}",
            flush=True,
        )


def calibration(games: list[dict[str, Any]]) -> str:
    """How often a locate was right, by the probability the player gave the triple it named."""
    bins: dict[str, list[bool]] = defaultdict(list)
    for game in games:
        for move in game["moves"]:
            if move["type"] == "locate":
                chance = move["chance"]
                label = "1" if chance >= 1 - 1e-9 else f"{int(chance * 5) / 5:.1f}+"
                bins[label].append(move["right"])
    return ", ".join(
        f"{label} {statistics.fmean(hits):.0%} of {len(hits)}" for label, hits in sorted(bins.items())
    )


# -- one-step deviations --------------------------------------------------------------------------
class Deviation:
    """A decider that plays the policy's moves, except that decision number `at` becomes `kind`'s move;
    with `at` None it only records which deviations each decision allows."""

    def __init__(self, at: int | None = None, kind: str = "") -> None:
        self.at, self.kind, self.count = at, kind, 0
        self.allowed: list[list[str]] = []

    def __call__(self, policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
        move = simulate.decide(policy, game, boards, counts)
        step, self.count = self.count, self.count + 1
        if self.at is None:
            order = preferred(policy, game, boards)
            self.allowed.append([kind for kind in KINDS if deviate(kind, move, counts, order) is not None])
            return move
        if step != self.at:
            return move
        return deviate(self.kind, move, counts, preferred(policy, game, boards))


def preferred(policy: str, game: simulate.Game, boards: BoardSet) -> list[AnyAction]:
    """The legal actions in the order the policy prefers them."""
    actions = simulate.candidates(policy, game, boards)
    return [actions[j] for j in simulate.preference(policy, score(boards, actions), actions)]


def deviate(kind: str, move: Any, counts: np.ndarray, order: list[AnyAction]) -> Any:
    """`kind`'s move in place of the policy's `move`, given the actions in the policy's `order` (None:
    that deviation does not apply here)."""
    locating = isinstance(move, str)
    if kind == "locate instead of acting":
        return simulate.LOCATE if not locating and counts[0] / counts.sum() >= LOCATE_AT_LEAST else None
    if kind == "act instead of locating":
        return order[0] if locating else None
    if locating:
        return None
    researching = isinstance(move, Research)
    if kind == "runner-up instead":
        same = [a for a in order if isinstance(a, Research) == researching]
        return same[1] if len(same) > 1 else None
    others = [a for a in order if not isinstance(a, Research)]
    return others[0] if researching and others else None


def deviations_of_game(task: tuple[str, int, int]) -> list[tuple[str, int]]:
    """(kind, days changed) for every deviation one standard game allows."""
    model, seed, index = task
    with Run(24 * 3600) as run:
        everything = all_boards(MODES["standard"], run)
        secret = simulate.secret_of({"seed": seed}, index, len(everything))
        spaces = simulate.conference_spaces({"mode": "standard"})

        def play(decider: Callable[..., Any]) -> int:
            game = simulate.play(
                everything,
                secret,
                "research",
                run,
                300,
                [seed, index],
                spaces,
                simulate.Setup(clue_model=model),
                decider=decider,
            )
            return int(game["days"])

        recorder = Deviation()
        own = play(recorder)
        return [
            (kind, play(Deviation(step, kind)) - own)
            for step, kinds in enumerate(recorder.allowed)
            for kind in kinds
        ]


def one_step_deviations(games: int, seed: int) -> None:
    print(
        f"standard: one-step deviations over {games} games per generator, seed {seed}; days changed, paired"
    )
    print(
        f"  {'generator':9} {'deviation':28} {'moves':>6} {'days':>7} {'95%':>6} {'better':>7} {'worse':>6}"
    )
    with ProcessPoolExecutor() as pool:
        for model in MODELS:
            changed: dict[str, list[int]] = defaultdict(list)
            tasks = [(model, seed, index) for index in range(games)]
            for found in pool.map(deviations_of_game, tasks, chunksize=10):
                for kind, change in found:
                    changed[kind].append(change)
            for kind in KINDS:
                diffs = np.array(changed[kind], dtype=float)
                if len(diffs) < 2:
                    continue
                print(f"  {model:9} {kind:28} {len(diffs):6d} {paired(diffs)}", flush=True)


# -- rules lifted ---------------------------------------------------------------------------------
LIFTED = ("whole sky visible", "conference on day 0")


def whole_sky(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
    """The policy's move with every survey and target of any sector allowed (while targets remain)."""
    mode = boards.mode
    targets_left = MAX_TARGETS - game.targets_used
    every = {a: None for s in range(1, mode.sectors + 1) for a in legal_actions(mode, s, targets_left)}
    actions: list[AnyAction] = [
        *every,
        *research_actions(game.topics(boards), game.researched, game.last_was_research),
    ]
    return simulate.choose(policy, boards, actions, counts)


def days_with_rules_lifted(task: tuple[str, str, int, int]) -> list[tuple[int, int]]:
    """One game's days and wrong locates as dealt, then with each rule of LIFTED lifted (on expert, both
    conference clues on day 0)."""
    mode, model, seed, index = task
    with Run(24 * 3600) as run:
        everything = all_boards(MODES[mode], run)
        secret = simulate.secret_of({"seed": seed}, index, len(everything))
        spaces = simulate.conference_spaces({"mode": mode})

        def play(spaces: list[int], decider: simulate.Decider = simulate.decide) -> tuple[int, int]:
            setup = simulate.Setup(clue_model=model)
            game = simulate.play(
                everything, secret, "research", run, 300, [seed, index], spaces, setup, decider
            )
            return int(game["days"]), int(game["wrong_locates"])

        return [play(spaces), play(spaces, whole_sky), play([1] * len(spaces))]


def rules_lifted(mode: str, games: int, seed: int) -> None:
    print(f"{mode}: {games} games per generator, seed {seed}, with a rule lifted; days, paired")
    print(
        f"  {'generator':9} {'rule lifted':20} {'as dealt':>8} {'lifted':>7} {'ratio':>6} {'change':>7}"
        f" {'95%':>6} {'shorter':>7} {'longer':>6} {'wrong locates (dealt, lifted)':>30}"
    )
    with ProcessPoolExecutor() as pool:
        for model in MODELS:
            tasks = [(mode, model, seed, index) for index in range(games)]
            played = np.array(list(pool.map(days_with_rules_lifted, tasks, chunksize=1)), dtype=float)
            days, wrong = played[:, :, 0], played[:, :, 1]
            for column, rule in enumerate(LIFTED, start=1):
                own, lifted = days[:, 0].mean(), days[:, column].mean()
                print(
                    f"  {model:9} {rule:20} {own:8.2f} {lifted:7.2f} {lifted / own:5.3f}x"
                    f" {paired(days[:, column] - days[:, 0])}"
                    f" {wrong[:, 0].mean():22.2f} {wrong[:, column].mean():7.2f}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--expert-games", type=int, default=0)
    parser.add_argument("--deviation-games", type=int, default=300)
    parser.add_argument("--lifted-games", type=int, default=0)
    parser.add_argument("--lifted-expert-games", type=int, default=0)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    started = time.perf_counter()
    if args.games:
        where_days_go("standard", args.games, args.seed)
    if args.expert_games:
        where_days_go("expert", args.expert_games, args.seed)
    if args.deviation_games:
        one_step_deviations(args.deviation_games, args.seed)
    if args.lifted_games:
        rules_lifted("standard", args.lifted_games, args.seed)
    if args.lifted_expert_games:
        rules_lifted("expert", args.lifted_expert_games, args.seed)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()

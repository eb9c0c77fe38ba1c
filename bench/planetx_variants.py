"""Planet X policy studies: the default policy against a changed one, game by game on the same games.

Each study is a decider (`simulate.play`'s `decider`) that plays the policy's moves except where it
changes one:
- `two-step`: instead of the survey or target the policy prefers, the one of its first TWO_STEP_CANDIDATES
  whose outcome, followed by the best survey or target at the sky it leaves (research in between, when a
  topic is left) on the boards that outcome leaves, tells the most per day, the outcome's chance weighing
  each (a look-ahead over the sky that conditions on outcomes);
- `sky-reach`: before a locate, the locate rule reads the best rate of information about Planet X's
  triple that any sky within SKY_REACH_DAYS days offers, those days counted as spent; if that rate says
  learn first, the policy's preferred action instead of the locate;
- `wait-for-conference`: no locate under WAIT_BELOW while a conference is due within WAIT_DAYS days (the
  policy's preferred action instead);
- `conference-aware`: while a conference clue is still to come, the survey or target among the policy's
  first CONFERENCE_CANDIDATES that tells the most per day *beyond that clue*: its worth scored on the
  boards each possible next clue leaves, weighed by the chance the uniform generator reads that clue next
  on each board (the clues making up CLUE_MASS of the chance; the uniform model only, whoever dealt);
- `locate-by-clue`: the locate rule counting the conference clue still to come: learning first takes
  H(triple) / rate days, less what the clue tells about the triple (its mutual information, by the
  uniform generator's chances as above) once it is read, and no sooner than it comes; a miss likewise
  for the triples left, the locate's days gone by; if learning first is then sooner, the policy's
  preferred action instead of the locate.
Printed per study: both averages, the paired change and its 95% interval, the games shorter and longer,
wrong locates per game and the seconds a game, against the default policy on the same games.

    .venv/bin/python bench/planetx_variants.py [--mode expert] [--model uniform] [--seed 2026]
        [--games 200] [--studies two-step,sky-reach,wait-for-conference,conference-aware,
        locate-by-clue]

Games run in a pool of processes, one game per task; each process first plays a game not counted (the
boards loaded, every topic's truth found), and no game reuses the decisions another one cached.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, cast

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.paired import paired  # noqa: E402
from puzzles.planetx import clues, simulate  # noqa: E402
from puzzles.planetx.actions import (  # noqa: E402
    LOCATE_DAYS,
    MAX_TARGETS,
    Action,
    AnyAction,
    entropy_bits,
    legal_actions,
    outcomes,
    score,
    sky_start_after,
)
from puzzles.planetx.board import MODES  # noqa: E402
from puzzles.planetx.boardset import BoardSet, all_boards, unique_inverse  # noqa: E402
from puzzles.runtime import Run  # noqa: E402

TWO_STEP_CANDIDATES = 6
CONFERENCE_CANDIDATES, CLUE_MASS = 12, 0.98
SKY_REACH_DAYS = 6
WAIT_DAYS, WAIT_BELOW = 4, 0.8


def preferred_action(policy: str, game: simulate.Game, boards: BoardSet) -> AnyAction | None:
    """The policy's preferred action (None: nothing left to learn)."""
    actions = simulate.candidates(policy, game, boards)
    scores = score(boards, actions)
    if scores.goal_bits.max() <= 1e-12:
        return None
    return actions[simulate.preference(policy, scores, actions)[0]]


def two_step(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
    move = simulate.decide(policy, game, boards, counts)
    if not isinstance(move, Action):
        return move
    actions = [a for a in simulate.candidates(policy, game, boards) if isinstance(a, Action)]
    scores = score(boards, actions)
    days = np.array([a.days for a in actions], dtype=float)
    first = simulate.action_worth(scores)
    ranked = np.argsort(-np.round(first / days, 12), kind="stable")[:TWO_STEP_CANDIDATES]
    research_between = bool(set(game.pairs) - game.researched)
    best, best_value = move, -1.0
    for j in ranked:
        value = _pair_rate(game, boards, actions[int(j)], float(first[j]), research_between)
        if value > best_value + 1e-12:
            best, best_value = actions[int(j)], value
    return best


def _pair_rate(
    game: simulate.Game, boards: BoardSet, action: Action, worth_now: float, between: bool
) -> float:
    """The expected worth per day of `action` and, per outcome, the best survey or target after it."""
    seen = outcomes(boards, [action])[:, 0]
    later = game.days + action.days + int(between)
    targets_left = MAX_TARGETS - game.targets_used - (action.type == "target")
    then = legal_actions(boards.mode, sky_start_after(boards.mode, later), targets_left)
    then_days = np.array([a.days for a in then], dtype=float)
    weights = boards.weights
    alone = worth_now / action.days
    value = 0.0
    for outcome in np.unique(seen):
        kept = seen == outcome
        chance = float(weights[kept].sum() / weights.sum())
        rest = boards.subset(kept)
        pair = alone
        if len(rest) > 1:
            then_worth = simulate.action_worth(score(rest, then))
            pair = max(alone, float(((worth_now + then_worth) / (action.days + then_days)).max()))
        value += chance * pair
    return value


def sky_reach(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
    move = simulate.decide(policy, game, boards, counts)
    if move != simulate.LOCATE:
        return move
    targets_left = MAX_TARGETS - game.targets_used
    reach = 0.0
    for delay in range(1, SKY_REACH_DAYS + 1):
        later = legal_actions(boards.mode, sky_start_after(boards.mode, game.days + delay), targets_left)
        later_days = np.array([a.days for a in later], dtype=float)
        reach = max(reach, float((score(boards, later).goal_bits / (later_days + delay)).max()))
    if simulate.locate_now(counts, reach):
        return move
    return preferred_action(policy, game, boards) or move


def wait_for_conference(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
    move = simulate.decide(policy, game, boards, counts)
    if move != simulate.LOCATE or game.conferences_heard >= len(game.conferences):
        return move
    due = game.conferences[game.conferences_heard][0] - game.days
    if due > WAIT_DAYS or counts[0] / counts.sum() >= WAIT_BELOW:
        return move
    return preferred_action(policy, game, boards) or move


def conference_aware(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
    move = simulate.decide(policy, game, boards, counts)
    if not isinstance(move, Action) or game.conferences_heard >= len(game.conferences):
        return move
    actions = [a for a in simulate.candidates(policy, game, boards) if isinstance(a, Action)]
    days = np.array([a.days for a in actions], dtype=float)
    ranked = np.argsort(-np.round(simulate.action_worth(score(boards, actions)) / days, 12), kind="stable")
    picks = [actions[int(j)] for j in ranked[:CONFERENCE_CANDIDATES]]
    chances = _next_clue_chances(game, boards)  # statements × boards
    mass = chances @ boards.weights
    order = np.argsort(-mass)
    covered = np.cumsum(mass[order]) / mass.sum()
    worth = np.zeros(len(picks))
    for k in order[: int(np.searchsorted(covered, CLUE_MASS)) + 1]:
        if mass[k] <= 0:
            break
        worth += mass[k] * simulate.action_worth(score(boards.weighted(chances[k]), picks))
    return picks[int(np.argmax(np.round(worth / days[ranked[: len(picks)]], 9)))]


_first_clue: dict[str, np.ndarray] = {}  # mode → statements × the whole set
#: the clues shown so far → the boards they were found for (rows) and the chances (statements × boards):
#: a board's chances depend on the board and the clues shown only, so any game may read them
_next_clue: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}


def _next_clue_chances(game: simulate.Game, boards: BoardSet) -> np.ndarray:
    """Per conference statement and board: the chance the uniform generator reads it as the game's next
    conference clue, were the board the hidden one."""
    count = len(game.conferences)
    shown = [statement for _, statement in game.conferences[: game.conferences_heard]]
    if not shown:
        if boards.mode.name not in _first_clue:
            _first_clue[boards.mode.name] = clue_chances(boards.whole, [], count)
        return _first_clue[boards.mode.name][:, boards.rows]
    key = (boards.mode.name, *(repr(s) for s in shown))
    known = _next_clue.get(key)
    if known is None or not np.isin(boards.rows, known[0]).all():
        _next_clue.clear()
        known = _next_clue[key] = (boards.rows.copy(), clue_chances(boards, shown, count))
    return known[1][:, np.searchsorted(known[0], boards.rows)]


def clue_chances(boards: BoardSet, shown: list[Any], count: int) -> np.ndarray:
    """statements × boards: the chance each conference statement is the next clue the uniform generator
    reads (a telling set drawn whole, read in a random order; any set of true ones when none tells)."""
    topic = clues.conference_topic(boards)
    given = [cast(int, clues.statement_position(boards.mode, topic.statements, s)) for s in shown]
    true, needed, ruled_out = clues.coverage(boards, topic)
    telling = clues.telling_sets(true, needed, ruled_out, count, given).astype(float)
    left = count - len(given)
    true_count = true.sum(axis=0) - len(given)
    out = np.zeros(true.shape, dtype=np.float32)
    for k in range(len(true)):
        if k in given or not true[k].any():
            continue
        with_k = clues.telling_sets(true, needed, ruled_out, count, [*given, k])
        anyhow = true[k] / np.maximum(true_count, 1)
        out[k] = np.where(telling > 0, with_k / np.maximum(telling, 1) / left, anyhow)
    return out


def locate_by_clue(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
    move = simulate.decide(policy, game, boards, counts)
    if move != simulate.LOCATE or game.conferences_heard >= len(game.conferences):
        return move
    actions = simulate.candidates(policy, game, boards)
    days = np.array([a.days for a in actions], dtype=float)
    rate = float((score(boards, actions).goal_bits / days).max())
    if rate <= 0:
        return move
    due = game.conferences[game.conferences_heard][0] - game.days
    chances = _next_clue_chances(game, boards)
    triples = boards.planet_x_triples()
    top = triples == boards.triple_counts()[0][0]
    p = float(counts[0] / counts.sum())
    entropy, clue_bits = _clue_bits(chances, triples, boards.weights)
    miss = ~top
    rest, rest_clue_bits = _clue_bits(chances[:, miss], triples[miss], boards.weights[miss])
    learn = _learn_days(entropy, clue_bits, due, rate)
    guess = LOCATE_DAYS + (1 - p) * (_learn_days(rest, rest_clue_bits, due - LOCATE_DAYS, rate) + LOCATE_DAYS)
    if guess < learn + LOCATE_DAYS:
        return move
    return preferred_action(policy, game, boards) or move


def _clue_bits(chances: np.ndarray, triples: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """H(triple) and I(next conference clue; triple) over the boards (chances: statements × boards)."""
    distinct, which = unique_inverse(triples)
    onehot = np.zeros((len(triples), len(distinct)))
    onehot[np.arange(len(triples)), which] = weights
    joint = chances.astype(float) @ onehot  # statements × triples
    marginal = onehot.sum(axis=0)
    entropy = float(entropy_bits(marginal))
    mass = joint.sum(axis=1)
    if mass.sum() <= 0:
        return entropy, 0.0
    after = float((mass * entropy_bits(joint, axis=1)).sum() / mass.sum())
    return entropy, max(entropy - after, 0.0)


def _learn_days(entropy: float, clue_bits: float, due: float, rate: float) -> float:
    """Days to learn `entropy` bits at `rate` a day, a clue worth `clue_bits` arriving free in `due` days."""
    due = max(due, 0)
    if entropy <= rate * due:
        return entropy / rate
    return max(due, (entropy - clue_bits) / rate)


STUDIES: dict[str, simulate.Decider] = {
    "two-step": two_step,
    "sky-reach": sky_reach,
    "wait-for-conference": wait_for_conference,
    "conference-aware": conference_aware,
    "locate-by-clue": locate_by_clue,
}


def played(task: tuple[str, str, int, int, str]) -> tuple[int, int, float]:
    """One game's days, wrong locates and seconds under `study` ("" for the policy itself)."""
    mode, model, seed, index, study = task
    simulate._decisions.clear()  # each game timed on its own, whatever the process played before
    with Run(24 * 3600) as run:
        everything = all_boards(MODES[mode], run)
        params = {"mode": mode, "seed": seed, "clue_model": model}
        secret = simulate.secret_of(params, index, len(everything))
        began = time.perf_counter()
        game = simulate.play(
            everything,
            secret,
            simulate.DEFAULT_POLICY,
            run,
            300,
            [seed, index],
            simulate.conference_spaces(params),
            simulate.Setup.of(params),
            STUDIES.get(study, simulate.decide),
        )
        return int(game["days"]), int(game["wrong_locates"]), time.perf_counter() - began


def warm(mode: str, model: str, seed: int, index: int) -> None:
    """Load the boards and find every topic's truth before any game is timed (a game not counted)."""
    played((mode, model, seed, index, ""))


def compare(mode: str, model: str, seed: int, games: int, studies: list[str]) -> None:
    print(f"{mode}, {model} generator, seed {seed}, {games} games, the player not told; paired")
    print(
        f"  {'study':20} {'policy':>7} {'study':>7} {'change':>7} {'95%':>6} {'shorter':>7} {'longer':>6}"
        f" {'wrong/game':>14} {'time':>6}"
    )
    with ProcessPoolExecutor(initializer=warm, initargs=(mode, model, seed, games)) as pool:
        # game by game, the policy and every study in turn: the caches a process fills serve all alike
        names = ["", *studies]
        tasks = [(mode, model, seed, index, study) for index in range(games) for study in names]
        results = np.array(list(pool.map(played, tasks)), dtype=float).reshape(games, len(names), 3)
    runs = {study: results[:, column] for column, study in enumerate(names)}
    base = runs[""]
    for study in studies:
        run = runs[study]
        print(
            f"  {study:20} {base[:, 0].mean():7.2f} {run[:, 0].mean():7.2f} {paired(run[:, 0] - base[:, 0])}"
            f" {base[:, 1].mean():6.2f} {run[:, 1].mean():6.2f} {run[:, 2].mean() / base[:, 2].mean():5.2f}x",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="expert", choices=sorted(MODES))
    parser.add_argument("--model", default="uniform", choices=("uniform", "weighted"))
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--studies", default=",".join(STUDIES))
    args = parser.parse_args()
    studies = [s for s in args.studies.split(",") if s]
    unknown = set(studies) - set(STUDIES)
    if unknown:
        parser.error(f"unknown studies {sorted(unknown)}; known: {', '.join(STUDIES)}")
    started = time.perf_counter()
    compare(args.mode, args.model, args.seed, args.games, studies)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()

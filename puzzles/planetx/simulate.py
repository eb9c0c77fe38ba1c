"""Kind `planetx.simulate`: play whole games on random boards and count the days a policy needs.

A game draws a board uniformly and, from it, the game's clues (see `clues`): six research topics with the
statement each would show, and the Planet X conference clues. Then it repeats: read any conference whose
time has come (free; after the last, also what the game's guarantee about them rules out: `told_apart`);
each research and conference clue also weighs the boards left by how likely the game was to show it on
each (`clues.hear_research`, `hear_conferences`; `weigh_clues: false` treats clues as plain facts);
if Planet X's sector and both neighbours are known, locate it (5 days) and stop;
otherwise let the policy pick an action, learn its outcome on the hidden board, keep the boards that agree
and advance the sky by the days spent. A wrong locate costs its 5 days and rules that guess out. The rules
hold throughout: research never twice in a row and each topic once, at most 2 targets, surveys and targets
only in the visible sky. Policies:
- `survey-only` (the seed's): surveys only, the most outcome entropy per day;
- `entropy`: the same measure with targets allowed;
- `goal`: the most information about Planet X's sector and neighbours per day, surveys and targets, and
  an early locate when a guess is likely enough to beat finding out for sure (expected days estimated from
  the remaining uncertainty and the current best information rate);
- `research` (default): `goal`, and research whenever the rules allow it (never twice in a row), the topic
  with the most information about Planet X's triple first: a one-step measure undervalues research, whose
  board information pays off over the later surveys (200 standard games: 20.6 days against 21.0 ranking
  research with the rest by information per day).
`conferences` (default true) gives every policy the conference clues; false plays the game without them
(as the figures before research were measured).
Games are sharded by index; each game is seeded by (seed, index), so a rerun plays it the same way.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzles.planetx.actions import (
    LOCATE_DAYS,
    MAX_TARGETS,
    AnyAction,
    Research,
    entropy_bits,
    legal_actions,
    outcomes,
    research_actions,
    score,
    sky_start_after,
)
from puzzles.planetx.board import MODES, Mode
from puzzles.planetx.boardset import BoardSet, all_boards, triple_parts
from puzzles.planetx.clues import (
    CONFERENCE_SPACES,
    Statement,
    Topic,
    conference_days,
    draw_conferences,
    draw_statement,
    draw_topics,
    hear_conferences,
    hear_research,
)
from puzzles.planetx.observations import WrongLocate, parse
from puzzles.runtime import Run
from puzzles.sharding import ShardResult, over_range, parse_range, solve_in_process

POLICIES = ("survey-only", "entropy", "goal", "research")
DEFAULT_POLICY = "research"
RESEARCHING = {"research"}
GAMES_PER_SHARD = {"standard": 250, "expert": 10}
LOCATE = "locate"

_decisions: dict[tuple[Any, ...], AnyAction | str] = {}
_DECISION_CACHE = 200_000


@dataclass
class Game:
    """One game's clock and what the rules track; `topics` and `clues`: the game's research topics and the
    statement each shows; `conferences`: (day, statement) in order."""

    topics: dict[str, Topic]
    clues: dict[str, Statement]
    conferences: list[tuple[int, Statement]]
    days: int = 0
    targets_used: int = 0
    wrong_locates: int = 0
    last_was_research: bool = False
    conferences_heard: int = 0
    weigh: bool = True  # weigh the boards by how likely each makes the clues shown (else: plain facts)

    def __post_init__(self) -> None:
        self.mix: Counter[str] = Counter()
        self.researched: set[str] = set()
        #: what was done, in order: the day it began and the action (as in deduce's `action`)
        self.moves: list[dict[str, Any]] = []


def _locate_now(counts: np.ndarray, rate: float) -> bool:
    """Is guessing the likeliest triple now expected to finish sooner than learning more first?

    Learning more is estimated as H(triple) / rate days before a sure locate; guessing costs a locate,
    and on a miss (1 - p) about the same again for what is left."""
    if rate <= 0:
        return True
    p = counts[0] / counts.sum()
    rest = float(entropy_bits(counts[1:])) if len(counts) > 1 else 0.0
    return (1 - p) * (rest / rate + LOCATE_DAYS) < float(entropy_bits(counts)) / rate


def choose(
    policy: str, boards: BoardSet, actions: list[AnyAction], triple_counts: np.ndarray
) -> AnyAction | str:
    """The policy's next move: an action, or LOCATE (name the likeliest triple)."""
    scores = score(boards, actions)
    days = np.array([a.days for a in actions], dtype=float)
    goal = policy in ("goal", *RESEARCHING)
    measure = scores.goal_bits if goal else scores.bits
    per_day = measure / days
    best = int(np.argmax(np.round(per_day, 12)))  # first of equals: deterministic
    if measure[best] <= 1e-12:
        return LOCATE  # nothing left to learn: guess
    if goal and _locate_now(triple_counts, float(per_day[best])):
        return LOCATE
    research = [j for j, action in enumerate(actions) if isinstance(action, Research)]
    if policy in RESEARCHING and research:
        # research is the cheapest action and what it tells about the board pays off over later surveys,
        # which a one-step measure does not see: take the most telling topic whenever the rules allow
        return actions[max(research, key=lambda j: (round(float(scores.goal_bits[j]), 12), -j))]
    return actions[best]


def _decide(policy: str, game: Game, boards: BoardSet, triple_counts: np.ndarray) -> AnyAction | str:
    mode = boards.mode
    sky = sky_start_after(mode, game.days)
    research = research_actions(game.topics, game.researched, game.last_was_research)
    key = (
        policy,
        mode.name,
        sky,
        game.targets_used,
        tuple((r.letter, id(r.topic)) for r in research),
        hash(boards.codes.tobytes()),
        None if boards.likelihood is None else hash(boards.likelihood.round(9).tobytes()),
        len(boards),
    )
    decision = _decisions.get(key)
    if decision is None:
        targets_left = MAX_TARGETS - game.targets_used
        actions: list[AnyAction] = [
            *legal_actions(mode, sky, targets_left, targets=policy != "survey-only"),
            *research,
        ]
        decision = choose(policy, boards, actions, triple_counts)
        if len(_decisions) >= _DECISION_CACHE:
            _decisions.clear()
        _decisions[key] = decision
    return decision


def new_game(everything: BoardSet, secret: int, policy: str, seeds: list[int], spaces: list[int]) -> Game:
    """Draw the game's clues from its hidden board (row `secret`): research topics and their statements
    (only for a policy that researches) and the conferences at the days of `spaces`, each from its own
    random stream seeded by `seeds`, so every policy hears the same conferences in the same game."""
    topics, clues = {}, {}
    if policy in RESEARCHING:
        rng = np.random.default_rng([*seeds, 1])
        topics = draw_topics(rng, everything, secret)
        clues = {letter: draw_statement(rng, topic, secret) for letter, topic in topics.items()}
    rng = np.random.default_rng([*seeds, 2])
    heard = draw_conferences(rng, everything, secret, len(spaces)) if spaces else []
    return Game(topics, clues, list(zip(conference_days(spaces), heard, strict=True)))


def play(
    everything: BoardSet,
    secret: int,
    policy: str,
    run: Run,
    max_days: int = 300,
    seeds: list[int] | None = None,
    spaces: list[int] | None = None,
    weigh: bool = True,
) -> dict[str, Any]:
    """One game on board `secret` (a row of `everything`); returns its days and action mix. `spaces`: the
    time-track spaces of the conferences (none: a game without them)."""
    mode = everything.mode
    truth = everything.subset(np.array([secret]))
    truth_triple = int(truth.planet_x_triples()[0])
    game = new_game(everything, secret, policy, seeds or [secret], spaces or [])
    game.weigh = weigh
    boards = everything
    while game.days < max_days:
        run.raise_if_stopped()
        boards = _hear_conferences(game, boards)
        triples, counts = boards.triple_counts()
        decision = LOCATE if len(triples) == 1 else _decide(policy, game, boards, counts)
        if isinstance(decision, str):  # LOCATE
            sector, left, right = triple_parts(int(triples[0]))
            game.moves.append({"day": game.days, "type": LOCATE, "sector": sector})
            game.days += LOCATE_DAYS
            game.mix[LOCATE] += 1
            game.last_was_research = False
            if int(triples[0]) == truth_triple:
                return _summary(game, found=True)
            game.wrong_locates += 1
            boards = boards.subset(WrongLocate(sector, left, right).mask(mode, boards.grid))
            continue
        boards = _act(game, boards, truth, decision)
    return _summary(game, found=False)


def _hear_conferences(game: Game, boards: BoardSet) -> BoardSet:
    """Apply every conference whose day has come (free: read to every player); once the last is heard,
    also what the game's guarantee about them tells (`clues.told_apart`)."""
    heard = game.conferences_heard
    while game.conferences_heard < len(game.conferences):
        day, statement = game.conferences[game.conferences_heard]
        if game.days < day:
            break
        boards = boards.subset(parse(boards.mode, statement).mask(boards.mode, boards.grid))
        game.conferences_heard += 1
    if heard < game.conferences_heard == len(game.conferences):
        boards = hear_conferences(boards, [statement for _, statement in game.conferences], game.weigh)
    return boards


def _act(game: Game, boards: BoardSet, truth: BoardSet, action: AnyAction) -> BoardSet:
    """Take `action`: learn its outcome on the hidden board and keep the boards that agree."""
    if isinstance(action, Research):
        boards = hear_research(boards, action.topic, game.clues[action.letter], game.weigh)
        game.researched.add(action.letter)
    else:
        seen = outcomes(truth, [action])[0, 0]
        boards = boards.subset(outcomes(boards, [action])[:, 0] == seen)
    game.moves.append({"day": game.days, **action.describe()})
    game.days += action.days
    game.targets_used += action.type == "target"
    game.last_was_research = isinstance(action, Research)
    game.mix[action.type] += 1
    return boards


def _summary(game: Game, found: bool) -> dict[str, Any]:
    return {
        "days": game.days,
        "found": found,
        "wrong_locates": game.wrong_locates,
        "conferences": game.conferences_heard,
        "mix": dict(game.mix),
        "moves": game.moves,
    }


# -- the sharding protocol ----------------------------------------------------------------------
def _mode(params: dict[str, Any]) -> Mode:
    return MODES[params["mode"]]


def plan(params: dict[str, Any], run: Run) -> list[str]:
    size = params.get("games_per_shard") or GAMES_PER_SHARD[params["mode"]]
    return [f"{start}:{min(start + size, params['games'])}" for start in range(0, params["games"], size)]


def conference_spaces(params: dict[str, Any]) -> list[int]:
    """The conferences' time-track spaces: none without `conferences`, else given or the mode's."""
    if not params.get("conferences", True):
        return []
    return list(params.get("conference_spaces") or CONFERENCE_SPACES[params["mode"]])


def secret_of(params: dict[str, Any], game_index: int, boards: int) -> int:
    """The board of game `game_index`: uniform, and the same every time for the same seed."""
    return int(np.random.default_rng([params.get("seed", 0), game_index]).integers(boards))


def run_shard(params: dict[str, Any], key: str, run: Run) -> ShardResult:
    """Play the games of a "start:stop" range (handing the rest on when the host's slice is used up)."""
    indices = parse_range(key)
    everything = all_boards(_mode(params), run)
    policy = params.get("policy", DEFAULT_POLICY)
    spaces = conference_spaces(params)

    def play_one(index: int) -> dict[str, Any]:
        began = time.perf_counter()
        secret = secret_of(params, index, len(everything))
        seeds = [params.get("seed", 0), index]
        game = play(
            everything,
            secret,
            policy,
            run,
            params.get("max_days", 300),
            seeds,
            spaces,
            params.get("weigh_clues", True),
        )
        run.progress(games_done=index - indices.start + 1, games=len(indices))
        return {
            "game": index,
            "board": int(everything.codes[secret]),
            **game,
            "seconds": time.perf_counter() - began,
        }

    games, rest = over_range(key, run, play_one)
    return ShardResult(summary={"games": games}, rest=rest)


def combine(params: dict[str, Any], summaries: list[dict[str, Any]]) -> dict[str, Any]:
    games = sorted((g for s in summaries for g in s["games"]), key=lambda g: g["game"])
    days = [g["days"] for g in games]
    mix: Counter[str] = Counter()
    for game in games:
        mix.update(game["mix"])
    histogram = Counter(days)
    return {
        "mode": params["mode"],
        "policy": params.get("policy", DEFAULT_POLICY),
        "games": len(games),
        "seed": params.get("seed", 0),
        "avg_days": statistics.fmean(days) if days else None,
        "median_days": statistics.median(days) if days else None,
        "max_days": max(days, default=None),
        "min_days": min(days, default=None),
        "unfinished": sum(not g["found"] for g in games),
        "wrong_locates": sum(g["wrong_locates"] for g in games),
        "conference_spaces": conference_spaces(params),
        "weigh_clues": params.get("weigh_clues", True),
        "action_mix": {k: mix[k] / len(games) for k in sorted(mix)} if games else {},
        "days_histogram": {str(d): histogram[d] for d in sorted(histogram)},
        "seconds_per_game": statistics.fmean(g["seconds"] for g in games) if games else None,
        "sample": games[: params.get("sample_games", 5)],
    }


def solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    """In-process, on every core."""
    return solve_in_process(__name__, params, run)

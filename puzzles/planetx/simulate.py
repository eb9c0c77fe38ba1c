"""Kind `planetx.simulate`: play whole games on random boards and count the days a policy needs.

A game draws a board uniformly and, from it, the game's starting facts (by `difficulty`, see `starting`) and
clues (by `clue_model`, see `generators`): six research topics with the statement each would show, and the
Planet X conference clues. The player is not told how the clues were drawn unless `clue_model_known`: it
weighs the mixture of both models and learns which dealt the game. Then it repeats: read any conference
whose time has come (free; after the last, also what the game's guarantee about them rules out:
`told_apart`); each research and conference clue also weighs the boards left by how likely the game was to
show it on each (`generators.hear`; a first conference clue as the first of those the game reads;
`weigh_clues: false` treats clues as plain facts); if Planet X's sector and both neighbours are known,
locate it (5 days) and stop; otherwise let the policy pick an action, learn its outcome on the hidden board,
keep the boards that agree and advance the sky by the days spent. A wrong locate costs its 5 days and
rules that guess out. The rules hold throughout: research never twice in a row and each topic once, at
most 2 targets, surveys and targets only in the visible sky.
Policies:
- `survey-only` (the seed's): surveys only, the most outcome entropy per day;
- `entropy`: the same measure with targets allowed;
- `goal`: the most information about Planet X's sector and neighbours per day, surveys and targets, and
  an early locate when a guess is likely enough to beat finding out for sure (expected days estimated from
  the remaining uncertainty and the current best information rate);
- `research` (default): `goal`, and research whenever the rules allow it (never twice in a row): a one-step
  measure undervalues research, whose board information pays off over the later surveys (200 standard
  games: 20.6 days against 21.0 ranking research with the rest by information per day). For the same
  reason both choices also count information about the whole board: a topic by its bits about Planet X's
  triple + RESEARCH_BOARD_WEIGHT × its bits about the board, a survey or target by (bits about the triple
  + ACTION_BOARD_WEIGHT × bits about the board) per day (the locate rule still reads the rate of bits
  about the triple). Measured in docs/benchmarks.md: 0.07–0.17 fewer days a standard game under the
  uniform generator on each of four seeds not tuned on; within the noise under the weighted one.
`conferences` (default true) gives every policy the conference clues; false plays the game without them
(as the figures before research were measured).
Games are sharded by index; each game is seeded by (seed, index), so a rerun plays it the same way.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from puzzles.planetx import starting
from puzzles.planetx.actions import (
    LOCATE_DAYS,
    MAX_TARGETS,
    Action,
    AnyAction,
    Research,
    Scores,
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
    research_likelihood,
    told_apart,
)
from puzzles.planetx.generators import (
    DEFAULT_MODEL,
    MODELS,
    ClueModel,
    Pair,
    Streams,
    hear,
)
from puzzles.planetx.observations import Observation, WrongLocate, parse
from puzzles.runtime import Run
from puzzles.sharding import ShardResult, over_range, parse_range, solve_in_process

POLICIES = ("survey-only", "entropy", "goal", "research")
DEFAULT_POLICY = "research"
RESEARCHING = {"research"}
#: what researching policies add to the bits about Planet X's triple: these times the bits about the board
#: (chosen on seed 2026's games; see the module docstring)
RESEARCH_BOARD_WEIGHT = 2.0
ACTION_BOARD_WEIGHT = 0.4
GAMES_PER_SHARD = {"standard": 250, "expert": 10}
LOCATE = "locate"

_decisions: dict[tuple[Any, ...], AnyAction | str] = {}
_DECISION_CACHE = 200_000
#: what picks a move: (policy, game, boards left, triple counts) → an action or LOCATE
Decider = Callable[[str, "Game", BoardSet, np.ndarray], "AnyAction | str"]


@dataclass
class Game:
    """One game's clock and what the rules track; `pairs`: the game's research topics (the pair of objects
    each is about, shown from the start) and `clues` the statement each shows; `conferences`: (day,
    statement) in order; `starting`: the facts dealt at the start (by difficulty); `models`: how the
    player believes the game deals its clues (several: it weighs their mixture)."""

    pairs: dict[str, Pair]
    clues: dict[str, Statement]
    conferences: list[tuple[int, Statement]]
    models: list[ClueModel]
    starting: list[Statement] = field(default_factory=list)
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
        #: every plain fact learned (where it holds on a set of boards), to start over from should the
        #: player's model of the clues rule out every board
        self.facts: list[Callable[[BoardSet], np.ndarray]] = []
        self.started_over = False
        #: per thing weighed anew as more is heard (the conference clues, their guarantee): per board of the
        #: whole set, per model, the likelihood weighed in so far
        self.weighed: dict[str, np.ndarray] = {}

    def topics(self, boards: BoardSet) -> dict[str, Topic]:
        """The topics as the player weighs them: by the model it finds likeliest so far."""
        odds = boards.model_odds()
        model = self.models[0 if odds is None else int(np.argmax(odds))]
        return {letter: model.topic(boards, pair) for letter, pair in self.pairs.items()}


def locate_now(counts: np.ndarray, rate: float) -> bool:
    """Is guessing the likeliest triple now expected to finish sooner than learning more first?

    Learning more is estimated as H(triple) / rate days before a sure locate; guessing costs a locate,
    and on a miss (1 - p) about the same again for what is left."""
    if rate <= 0:
        return True
    p = counts[0] / counts.sum()
    rest = float(entropy_bits(counts[1:])) if len(counts) > 1 else 0.0
    sooner: bool = (1 - p) * (rest / rate + LOCATE_DAYS) < float(entropy_bits(counts)) / rate
    return sooner


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
    if goal and locate_now(triple_counts, float(per_day[best])):
        return LOCATE
    return actions[preference(policy, scores, actions)[0]]


def preference(policy: str, scores: Scores, actions: list[AnyAction]) -> list[int]:
    """The actions in the order the policy prefers them (first of equals first), locating aside.

    Research is the cheapest action and what it tells about the board pays off over later surveys, which
    a one-step measure does not see: a researching policy takes the most telling topic whenever the rules
    allow, then ranks the rest by what they tell per day."""
    days = np.array([a.days for a in actions], dtype=float)
    if policy not in RESEARCHING:
        measure = scores.goal_bits if policy == "goal" else scores.bits
        return _best_first(measure / days, range(len(actions)))
    research = [j for j, action in enumerate(actions) if isinstance(action, Research)]
    others = [j for j, action in enumerate(actions) if not isinstance(action, Research)]
    worth = scores.goal_bits + RESEARCH_BOARD_WEIGHT * scores.bits
    worth_per_day = action_worth(scores) / days
    return _best_first(worth, research) + _best_first(worth_per_day, others)


def action_worth(scores: Scores) -> np.ndarray:
    """What a researching policy ranks a survey or target by, before dividing by its days: its bits about
    Planet X's triple + ACTION_BOARD_WEIGHT × its bits about the board."""
    return scores.goal_bits + ACTION_BOARD_WEIGHT * scores.bits


def _best_first(values: np.ndarray, indices: Iterable[int]) -> list[int]:
    return sorted(indices, key=lambda j: (-round(float(values[j]), 12), j))


def decide(policy: str, game: Game, boards: BoardSet, triple_counts: np.ndarray) -> AnyAction | str:
    """The policy's next move in `game` (kept per state: games of a shard often meet the same one)."""
    research = _research(game, boards)
    key = (
        policy,
        boards.mode.name,
        sky_start_after(boards.mode, game.days),
        game.targets_used,
        tuple((r.letter, id(r.topic)) for r in research),
        hash(boards.codes.tobytes()),
        None if boards.likelihood is None else hash(boards.likelihood.round(9).tobytes()),
        len(boards),
    )
    decision = _decisions.get(key)
    if decision is None:
        decision = choose(policy, boards, candidates(policy, game, boards, research), triple_counts)
        if len(_decisions) >= _DECISION_CACHE:
            _decisions.clear()
        _decisions[key] = decision
    return decision


def candidates(
    policy: str, game: Game, boards: BoardSet, research: list[Research] | None = None
) -> list[AnyAction]:
    """Every action the rules allow now (targets only for policies that take them)."""
    targets_left = MAX_TARGETS - game.targets_used
    sky = sky_start_after(boards.mode, game.days)
    return [
        *legal_actions(boards.mode, sky, targets_left, targets=policy != "survey-only"),
        *(_research(game, boards) if research is None else research),
    ]


def _research(game: Game, boards: BoardSet) -> list[Research]:
    return research_actions(game.topics(boards), game.researched, game.last_was_research)


def new_game(
    everything: BoardSet,
    secret: int,
    policy: str,
    seeds: list[int],
    spaces: list[int],
    setup: Setup | None = None,
) -> Game:
    """Deal the game on its hidden board (row `secret`): starting facts, research topics and their
    statements, conferences at the days of `spaces`, each from a random stream of its own seeded by
    `seeds`, so every policy plays the same game. A policy that does not research is shown no topics."""
    setup = setup or Setup()
    dealer = MODELS[setup.clue_model]
    streams = Streams(np.random.default_rng([*seeds, 1]), np.random.default_rng([*seeds, 2]))
    dealt = dealer.deal(streams, everything, secret, len(spaces))
    count = starting.DIFFICULTIES[setup.difficulty]
    facts = starting.draw(np.random.default_rng([*seeds, 3]), everything, secret, count)
    models = [dealer] if setup.clue_model_known else list(MODELS.values())
    researching = policy in RESEARCHING
    return Game(
        dealt.pairs if researching else {},
        dealt.statements if researching else {},
        list(zip(conference_days(spaces), dealt.conferences, strict=True)),
        models,
        facts,
        weigh=setup.weigh,
    )


@dataclass(frozen=True)
class Setup:
    """How games are dealt and what the player knows of it: `difficulty` (the starting facts),
    `clue_model` (how clues are drawn), `clue_model_known` (false: the player weighs both models),
    `weigh` (false: clues are plain facts)."""

    difficulty: str = starting.DEFAULT_DIFFICULTY
    clue_model: str = DEFAULT_MODEL
    clue_model_known: bool = False
    weigh: bool = True

    @classmethod
    def of(cls, params: dict[str, Any]) -> Setup:
        return cls(
            params.get("difficulty", starting.DEFAULT_DIFFICULTY),
            params.get("clue_model", DEFAULT_MODEL),
            params.get("clue_model_known", False),
            params.get("weigh_clues", True),
        )


def play(
    everything: BoardSet,
    secret: int,
    policy: str,
    run: Run,
    max_days: int = 300,
    seeds: list[int] | None = None,
    spaces: list[int] | None = None,
    setup: Setup | None = None,
    decider: Decider = decide,
) -> dict[str, Any]:
    """One game on board `secret` (a row of `everything`); returns its days and action mix. `spaces`: the
    time-track spaces of the conferences (none: a game without them); `decider`: what picks each move
    while Planet X's triple is not yet known (the policy's `decide`; a study may change a move)."""
    truth = everything.subset(np.array([secret]))
    truth_triple = int(truth.planet_x_triples()[0])
    game = new_game(everything, secret, policy, seeds or [secret], spaces or [], setup)
    boards = _start(game, everything)
    while game.days < max_days:
        run.raise_if_stopped()
        boards = _hear_conferences(game, boards)
        if not len(boards):  # the player's model of the clues was wrong: keep the plain facts only
            boards = _start_over(game, everything)
        triples, counts = boards.triple_counts()
        decision = LOCATE if len(triples) == 1 else decider(policy, game, boards, counts)
        if isinstance(decision, str):  # LOCATE
            sector, left, right = triple_parts(int(triples[0]))
            right_guess = int(triples[0]) == truth_triple
            chance = round(float(counts[0] / counts.sum()), 4)  # how likely the player found the guess
            game.moves.append(
                {"day": game.days, "type": LOCATE, "sector": sector, "chance": chance, "right": right_guess}
            )
            game.days += LOCATE_DAYS
            game.mix[LOCATE] += 1
            game.last_was_research = False
            if right_guess:
                return _summary(game, boards, found=True)
            game.wrong_locates += 1
            game.facts.append(_where_true(WrongLocate(sector, left, right)))
            boards = boards.subset(game.facts[-1](boards))
            continue
        boards = _act(game, boards, truth, decision)
    return _summary(game, boards, found=False)


def _start(game: Game, everything: BoardSet) -> BoardSet:
    """The boards the game's start leaves: its starting facts, and (weighing) how likely each board
    made them and the research pairs shown."""
    game.facts += [_where_true(parse(everything.mode, statement)) for statement in game.starting]
    boards = everything
    if game.starting:
        chance = starting.likelihood(boards, game.starting)
        boards = boards.weighted(chance) if game.weigh else boards.subset(chance > 0)
    if game.pairs and game.weigh:
        chances: list[np.ndarray | None] = [m.pairs_likelihood(boards, game.pairs) for m in game.models]
        boards = hear(boards, chances, lambda b: np.ones(len(b), dtype=bool))
    return boards


def _where_true(fact: Observation) -> Callable[[BoardSet], np.ndarray]:
    def holds(boards: BoardSet) -> np.ndarray:
        return fact.mask(boards.mode, boards.grid)

    return holds


def _where_seen(action: Action, seen: int) -> Callable[[BoardSet], np.ndarray]:
    def holds(boards: BoardSet) -> np.ndarray:
        return cast(np.ndarray, outcomes(boards, [action])[:, 0] == seen)

    return holds


def _start_over(game: Game, everything: BoardSet) -> BoardSet:
    game.started_over = True
    boards = everything
    for fact in game.facts:
        boards = boards.subset(fact(boards))
    return boards


def _hear_conferences(game: Game, boards: BoardSet) -> BoardSet:
    """Apply every conference whose day has come (free: read to every player) and, weighing, how likely
    the player's models make the clues read so far, the first of all the game will read (a first clue
    alone tells something too; each weighing replaces the one before) and the models' guarantee; a
    player who does not weigh but is sure of the uniform model uses its guarantee, once every clue is
    read, as a plain fact (`clues.told_apart`)."""
    mode = boards.mode
    heard = game.conferences_heard
    while game.conferences_heard < len(game.conferences):
        day, statement = game.conferences[game.conferences_heard]
        if game.days < day:
            break
        game.facts.append(_where_true(parse(mode, statement)))
        boards = boards.subset(game.facts[-1](boards))
        game.conferences_heard += 1
    if heard == game.conferences_heard or not len(boards):  # none new, or the player starts over
        return boards
    shown = [statement for _, statement in game.conferences[: game.conferences_heard]]
    if game.weigh:
        count = len(game.conferences)
        chances = [model.conference_likelihood(boards, shown, count) for model in game.models]
        if any(chance is not None for chance in chances):
            now = np.column_stack([np.zeros(len(boards)) if c is None else c for c in chances])
            boards = _weigh_anew(game, "conferences", boards, now)
        return _hear_guarantee(game, boards)
    if game.conferences_heard == len(game.conferences) and [m.name for m in game.models] == ["uniform"]:
        boards = boards.subset(told_apart(boards, shown))
    return boards


def _hear_guarantee(game: Game, boards: BoardSet) -> BoardSet:
    """Once a conference clue is heard, weigh each board by how likely the player's models' guarantee
    (the game's clues tell Planet X apart) makes the clues dealt there, given the conference and research
    clues heard so far (`ClueModel.guarantee_likelihood`); each clue heard later updates it."""
    if not game.weigh or not game.conferences_heard:
        return boards
    shown = [statement for _, statement in game.conferences[: game.conferences_heard]]
    heard = [game.clues[letter] for letter in sorted(game.researched)]
    unheard = [pair for letter, pair in sorted(game.pairs.items()) if letter not in game.researched]
    count = len(game.conferences)
    chances = [model.guarantee_likelihood(boards, shown, heard, unheard, count) for model in game.models]
    if all(chance is None for chance in chances):
        return boards
    now = np.column_stack([np.ones(len(boards)) if c is None else c for c in chances])
    return _weigh_anew(game, "guarantee", boards, now)


def _weigh_anew(game: Game, what: str, boards: BoardSet, now: np.ndarray) -> BoardSet:
    """Weigh each board by `now` (boards × models: each model's likelihood of `what`) in place of what
    was weighed in for `what` before."""
    weighed = game.weighed.setdefault(what, np.ones((len(boards.whole), len(game.models))))
    before = weighed[boards.rows]
    factors = np.divide(now, before, out=np.zeros_like(now), where=before > 0)
    weighed[boards.rows] = now
    return boards.weighted(factors[:, 0]) if len(game.models) == 1 else boards.weighted_by_model(factors)


def _act(game: Game, boards: BoardSet, truth: BoardSet, action: AnyAction) -> BoardSet:
    """Take `action`: learn its outcome on the hidden board and keep the boards that agree."""
    mode = boards.mode
    if isinstance(action, Research):
        statement = game.clues[action.letter]
        fact = _where_true(parse(mode, statement))
        pair = game.pairs[action.letter]
        chances = [
            research_likelihood(boards, model.topic(boards, pair), statement) if game.weigh else None
            for model in game.models
        ]
        boards = hear(boards, chances, fact)
        game.researched.add(action.letter)
        boards = _hear_guarantee(game, boards)
    else:
        seen = outcomes(truth, [action])[0, 0]
        fact = _where_seen(action, int(seen))
        boards = boards.subset(fact(boards))
    game.facts.append(fact)
    game.moves.append({"day": game.days, **action.describe()})
    game.days += action.days
    game.targets_used += action.type == "target"
    game.last_was_research = isinstance(action, Research)
    game.mix[action.type] += 1
    return boards


def _summary(game: Game, boards: BoardSet, found: bool) -> dict[str, Any]:
    odds = boards.model_odds()
    return {
        "days": game.days,
        "found": found,
        "wrong_locates": game.wrong_locates,
        "conferences": game.conferences_heard,
        "starting_facts": game.starting,
        "mix": dict(game.mix),
        "moves": game.moves,
        # how likely the player found each model of the clues at the end (when it weighed several)
        "model_odds": None
        if odds is None
        else {m.name: round(float(p), 4) for m, p in zip(game.models, odds, strict=True)},
        "started_over": game.started_over,
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
    setup = Setup.of(params)

    def play_one(index: int) -> dict[str, Any]:
        began = time.perf_counter()
        secret = secret_of(params, index, len(everything))
        seeds = [params.get("seed", 0), index]
        game = play(everything, secret, policy, run, params.get("max_days", 300), seeds, spaces, setup)
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
        "difficulty": params.get("difficulty", starting.DEFAULT_DIFFICULTY),
        "clue_model": params.get("clue_model", DEFAULT_MODEL),
        "clue_model_known": params.get("clue_model_known", False),
        # the mean's 95% interval, half its width (normal approximation)
        "avg_days_ci95": 1.96 * statistics.stdev(days) / len(days) ** 0.5 if len(days) > 1 else None,
        "started_over": sum(g.get("started_over", False) for g in games),
        # games where the player, weighing both clue models, ended finding the dealing one likelier
        "model_identified": sum(
            (g.get("model_odds") or {}).get(params.get("clue_model", DEFAULT_MODEL), 0) > 0.5 for g in games
        ),
        "action_mix": {k: mix[k] / len(games) for k in sorted(mix)} if games else {},
        "days_histogram": {str(d): histogram[d] for d in sorted(histogram)},
        "seconds_per_game": statistics.fmean(g["seconds"] for g in games) if games else None,
        "sample": games[: params.get("sample_games", 5)],
    }


def solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    """In-process, on every core."""
    return solve_in_process(__name__, params, run)

"""Kind `mastermind.play`: whole games against many secrets, sharded by secret (puzzles.sharding's
ShardedPuzzle: `plan`, `run_shard`, `combine`; `play` runs them in-process on every core).

Every guess is a function of the params and the history, and a player remembers the guess for every history
it has seen, so a game or a shard replays identically.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter
from typing import Any

from puzzles.mastermind.codes import Code, History, all_codes, code_at, score
from puzzles.mastermind.model import _Session
from puzzles.mastermind.strategies import DEFAULT_SAMPLES, MINIMAX_LIMIT, decide
from puzzles.runtime import Run
from puzzles.sharding import ShardResult, over_range, parse_range, solve_in_process

#: `secrets: "all"` plays every code, so only this many
ALL_LIMIT = 5_000
#: a play shard aims at this many seconds
SHARD_SECONDS = 5.0


def default_max_turns(n: int, k: int) -> int:
    # with n = 1 every strategy may need all k colours
    return max(4 * n + 10, 2 * k)


def secrets_of(params: dict[str, Any]) -> list[Code]:
    """The secrets a play job plays, in a fixed order: listed, every code, or a seeded sample."""
    n, k, secrets = params["n"], params["k"], params["secrets"]
    space = k**n
    if secrets == "all":
        if space > ALL_LIMIT:
            raise ValueError(f'"all" plays every code, so it needs k**n ≤ {ALL_LIMIT}')
        return list(all_codes(n, k))
    if isinstance(secrets, dict):
        count, rng = secrets["sample"], random.Random(secrets.get("seed") or 0)
        if count > space:
            raise ValueError(f"cannot sample {count} distinct secrets from {space} codes")
        if count * 2 > space:
            indexes = rng.sample(range(space), count)
        else:
            seen: dict[int, None] = {}
            while len(seen) < count:
                seen[rng.randrange(space)] = None
            indexes = list(seen)
        return [code_at(index, n, k) for index in indexes]
    return [tuple(code) for code in secrets]


#: the guess for each history, per (n, k, strategy, seed, samples), kept by the process where Z3 had no part
#: in it (numpy's enumeration, a stored book: a function of those and the history alone). The first games of
#: a shard work out what every later game reads (the first guess is the same in every game, the second
#: depends only on the first feedback, ...): a shard that a slice cut short, or the next shard of the job in
#: this process, does not work them out again. A guess Z3 picked depends on what ran before in its context,
#: so it is kept for its shard alone, which then replays identically.
_MEMOS: dict[tuple[int, int, str, int, int], dict[History, Code]] = {}
#: histories kept in all, past which the process starts over
MEMO_LIMIT = 100_000


class _Player:
    """Plays games with one strategy, remembering the guess for every history seen (in this shard, or in
    this process where Z3 had no part in it)."""

    def __init__(self, params: dict[str, Any], run: Run):
        self.n, self.k = params["n"], params["k"]
        self.strategy = params.get("strategy") or "best"
        self.seed = params.get("seed") or 0
        self.samples = params.get("samples") or DEFAULT_SAMPLES
        self.max_turns = params.get("max_turns") or default_max_turns(self.n, self.k)
        self.session = _Session(run)
        self.memo: dict[History, Code] = {}
        key = (self.n, self.k, self.strategy, self.seed, self.samples)
        if sum(len(memo) for memo in _MEMOS.values()) > MEMO_LIMIT:
            _MEMOS.clear()
        self.shared = _MEMOS.setdefault(key, {})

    def next_guess(self, history: History) -> Code:
        known = self.memo.get(history) or self.shared.get(history)
        if known is not None:
            return known
        asked = self.session.z3_uses
        decision = decide(self.n, self.k, history, self.strategy, self.seed, self.samples, self.session)
        if decision.guess is None:  # cannot happen with true feedback
            raise RuntimeError(f"no code fits the feedback so far: {history}")
        (self.shared if self.session.z3_uses == asked else self.memo)[history] = decision.guess
        return decision.guess

    def play(self, index: int, secret: Code) -> dict[str, Any]:
        started = time.perf_counter()
        history: History = ()
        solved = False
        while not solved and len(history) < self.max_turns:
            self.session.run.raise_if_stopped()
            code = self.next_guess(history)
            black, white = score(secret, code)
            history += ((code, black, white),)
            solved = black == self.n
        return {
            "index": index,
            "secret": list(secret),
            "guesses": [{"guess": list(g), "black": b, "white": w} for g, b, w in history],
            "turns": len(history),
            "solved": solved,
            "seconds": time.perf_counter() - started,
        }


#: measured seconds per game with 6 colours on one core, by code length (bench/mastermind.py and the same
#: play calls at other lengths); between and beyond the points a geometric interpolation
_MEASURED_SECONDS = {
    "best": {4: 0.008, 8: 0.04, 12: 0.37, 16: 7.0, 20: 30.0},
    "consistent": {4: 0.007, 8: 0.08, 16: 0.96},
}


def _seconds_per_game(n: int, k: int, strategy: str) -> float:
    """A rough guess of one game's cost, for sizing shards (minimax plays like best beyond its limit)."""
    points = sorted(_MEASURED_SECONDS["consistent" if strategy == "consistent" else "best"].items())
    (low, low_s), (high, high_s) = next(
        ((a, b) for a, b in itertools.pairwise(points) if n <= b[0]), points[-2:]
    )
    per_position = (high_s / low_s) ** (1 / (high - low))
    seconds: float = low_s * per_position ** (n - low) * max(1.0, k / 6)  # float ** is typed Any
    return seconds


def plan(params: dict[str, Any], run: Run) -> list[str]:
    """Shard keys "start:stop": index ranges over `secrets_of(params)`, each a few seconds of play."""
    total = len(secrets_of(params))
    estimate = _seconds_per_game(params["n"], params["k"], params.get("strategy") or "best")
    size = max(1, min(500, int(SHARD_SECONDS / estimate)))
    return [f"{start}:{min(start + size, total)}" for start in range(0, total, size)]


def run_shard(params: dict[str, Any], key: str, run: Run) -> ShardResult:
    """Play the games of a "start:stop" range (handing the rest on when the host's slice is used up)."""
    indices = parse_range(key)
    player, secrets = _Player(params, run), secrets_of(params)

    def play_one(index: int) -> dict[str, Any]:
        game = player.play(index, secrets[index])
        run.progress(games_done=index - indices.start + 1, games_total=len(indices))
        return game

    with run.interruptible():
        games, rest = over_range(key, run, play_one)
    return ShardResult(summary={"games": games}, rest=rest)


def combine(params: dict[str, Any], summaries: list[dict[str, Any]]) -> dict[str, Any]:
    games = sorted((game for summary in summaries for game in summary["games"]), key=lambda g: g["index"])
    count = len(games)
    seconds = sum(game["seconds"] for game in games)
    histogram = Counter(game["turns"] for game in games if game["solved"])
    strategy = params.get("strategy") or "best"
    note = None
    if strategy == "minimax" and params["k"] ** params["n"] > MINIMAX_LIMIT:
        note = f"minimax scores every code, so it needs k**n ≤ {MINIMAX_LIMIT}: best played instead"
    from puzzles.mastermind.optimal import stored_tree  # here: see strategies._decide_optimal

    if strategy == "optimal" and stored_tree(params["n"], params["k"]) is None:
        note = f"no optimal strategy is stored for {params['n']}×{params['k']}: best played instead"
    return {
        "games": games,
        "games_count": count,
        "avg_turns": sum(game["turns"] for game in games) / count if count else None,
        "max_turns": max((game["turns"] for game in games), default=None),
        "turn_histogram": {str(turns): histogram[turns] for turns in sorted(histogram)},
        "unsolved": sum(1 for game in games if not game["solved"]),
        "seconds_per_game": seconds / count if count else None,
        "seconds": seconds,
        "strategy": strategy,
        "note": note,
    }


def play(params: dict[str, Any], run: Run) -> dict[str, Any]:
    """Kind `mastermind.play`, in-process on every core."""
    return solve_in_process(__name__, params, run)

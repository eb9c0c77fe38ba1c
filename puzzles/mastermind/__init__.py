"""Mastermind: the next guess for a history of feedback (kind `mastermind.guess`), and whole games against
many secrets, sharded by secret (kind `mastermind.play`).

A code is n colours in 0..k-1. Feedback: black = right colour in the right place; white = Σ over colours of
min(count in secret, count in guess) − black.

Every guess is a function of the params and the history (randomness is seeded by both), so a game or a
shard replays identically. Z3's models also depend on what ran before in the same context, and a play shard
keeps one context (holding its memory until the run ends): where Z3 picks the guess, a `guess` call can pick
a different, equally valid, code than a game did at the same history.

Modules, each importing only those above it:

* `codes` — codes, feedback (`score`), and listing codes (every code, those that fit a history, canonical
  candidates, first-guess patterns)
* `model` — the SAT model: conflicting entries, counting and sampling fitting codes
* `split` — meet in the middle: the fitting codes counted exactly and drawn uniformly
* `scoring` — scoring candidates in plain Python, hill climbing, the first guess; `Decision`
* `sampled` — strategy `best` above ENUM_LIMIT, on sampled consistent codes
* `strategies` — `decide`: the next guess by strategy (the strategies are described there)
* `guessing` — kind `mastermind.guess`
* `games` — kind `mastermind.play`: plan, run_shard, combine (puzzles.sharding.ShardedPuzzle) and play
* `every` — a strategy against every secret at once: its decision tree walked, each history decided once
  (the benchmark's exact averages at sizes too large to play secret by secret)

The kind registry loads `puzzles.mastermind:guess` and `puzzles.mastermind:play`, and runs the sharded kind
through this package's plan, run_shard and combine. Tuning constants are read where they are defined: patch
them on their module (e.g. `games.SHARD_SECONDS`), not here.
"""

from puzzles.mastermind.codes import ENUM_LIMIT, Code, Entry, History, all_codes, code_at, score
from puzzles.mastermind.games import ALL_LIMIT, combine, default_max_turns, plan, play, run_shard, secrets_of
from puzzles.mastermind.guessing import guess, history_of
from puzzles.mastermind.model import conflicting_entries, count_consistent, sat_models
from puzzles.mastermind.scoring import Decision
from puzzles.mastermind.split import exact_count, split_fits
from puzzles.mastermind.strategies import DEFAULT_SAMPLES, MINIMAX_LIMIT, STRATEGIES, decide

__all__ = [
    "ALL_LIMIT",
    "DEFAULT_SAMPLES",
    "ENUM_LIMIT",
    "MINIMAX_LIMIT",
    "STRATEGIES",
    "Code",
    "Decision",
    "Entry",
    "History",
    "all_codes",
    "code_at",
    "combine",
    "conflicting_entries",
    "count_consistent",
    "decide",
    "default_max_turns",
    "exact_count",
    "guess",
    "history_of",
    "plan",
    "play",
    "run_shard",
    "sat_models",
    "score",
    "secrets_of",
    "split_fits",
]

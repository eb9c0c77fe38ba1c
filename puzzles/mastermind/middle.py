"""Strategy `best`'s middle game at 6×9 and 7×7 (`middle_fits`): once the books are spent and more codes fit
than the exact end game takes, the guess of the fewest expected further guesses, over every code that fits
and many other codes. (At 7×7, OVER_STRONGER, it plays instead of `stronger`'s middle game: 6.0889 against
6.0902 over every secret, with the end game from 120 codes; from 200, stronger.ENDGAME_AT, 6.0869: see
docs/benchmarks.md.)

Why: after the third-turn book about three quarters of the 6×9 codes were still in parts of more than 70
codes (1,595 parts, at most 2,335 codes each; the end game now takes parts of up to 200), and the middle
game played there before (`sampled`: 100 sampled codes that fit, scored against at most 600 sampled
targets) was where `best` lost to the published Entropy strategy, which scores every code against every
code that fits.

* Targets: every code that fits (met in the middle, `split._Split`), up to MAX_TARGETS (else None: the
  previous middle game plays).
* Candidates: every code that fits and random codes of the whole space, within BUDGET class evaluations
  (classes by `stronger._Engine`); the CLIMB_STARTS best are refined by hill climbing (one position
  recoloured at a time, every such neighbour scored exactly).
* Score (`expected_cost`): Σ over the feedback parts p of |p| · further(|p|), the part "the guess is the
  secret" costing nothing, where further(m) estimates the guesses a part of m codes still needs, its own
  last one included: 1 for one code, 1.5 for two, else FURTHER_A + FURTHER_B · ln m, fitted (least
  squares weighted by m) to the exact end game's optimum on the 1,078 parts of 3–70 codes that this
  middle game's guess (with a rough first further, 0.85 + 0.42 · ln m) left in 60 fourth-turn parts
  drawn by size (per code: 1.69 at 3 codes, 2.20 at 10–15, 2.50 at 26–40, 2.72 at 56–70; the fit is
  within 0.05 of each). The least cost wins, ties to a code that fits, then to the first. Entropy and
  most parts are proxies of this count.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import cast

import numpy as np

import puzzles.mastermind.stronger as stronger
from puzzles.mastermind.codes import Code, History
from puzzles.mastermind.scoring import Decision
from puzzles.mastermind.split import _Split, _TooManyPairs
from puzzles.mastermind.stronger import _engine, _random_codes, _sizes, endgame_fits
from puzzles.runtime import Run

#: codes that fit at most for this middle game (6×9 after the books: at most 2,335)
MAX_TARGETS = 4_000
#: class evaluations per turn (candidates × targets), and the most random candidates
BUDGET = 6_000_000
MAX_RANDOM = 20_000
#: the best candidates that are refined by hill climbing
CLIMB_STARTS = 3
#: further(m) = FURTHER_A + FURTHER_B · ln m for m ≥ 3
FURTHER_A = 1.38
FURTHER_B = 0.325
#: class evaluations per block (bounds the memory of a block's classes)
BLOCK_WORK = 2_000_000


#: sizes where this middle game also takes over from `stronger`'s once the books are spent (7×7)
OVER_STRONGER = {(7, 7)}


def middle_fits(n: int, k: int) -> bool:
    """Whether this middle game plays n×k (the sizes where the previous best plays with the exact end game:
    6×9; and OVER_STRONGER)."""
    return endgame_fits(n, k) or (n, k) in OVER_STRONGER


def _endgame_size(n: int, k: int) -> int:
    """The most codes the exact end game takes at n×k (this middle game plays above it)."""
    return stronger.endgame_size(n, k) if (n, k) in OVER_STRONGER else stronger.PREVIOUS_ENDGAME


@lru_cache(maxsize=4)
def _further(size: int) -> np.ndarray:
    """further(m) for m = 0 .. size - 1 (0 for an empty part)."""
    sizes = np.arange(size, dtype=np.float64)
    table = FURTHER_A + FURTHER_B * np.log(np.maximum(sizes, 1))
    table[:3] = (0.0, 1.0, 1.5)[: min(3, size)]
    return table


def expected_cost(sizes: np.ndarray, n: int) -> np.ndarray:
    """Per row of part sizes (indexed by feedback class), Σ |p| · further(|p|), the winning part (all
    blacks) costing nothing: the total further guesses expected over the codes, after this one."""
    costs = sizes * _further(int(sizes.max()) + 1)[sizes]
    costs[:, n * (n + 1) + n] = 0.0
    return cast(np.ndarray, np.round(costs.sum(1), 9))


def _scores(candidates: np.ndarray, targets: np.ndarray, n: int, k: int) -> np.ndarray:
    """expected_cost of every encoded candidate row against the encoded targets, in blocks."""
    engine = _engine(n, k)
    step = max(1, BLOCK_WORK // len(targets))
    return np.concatenate(
        [
            expected_cost(_sizes(engine.classes(candidates[start : start + step], targets), n), n)
            for start in range(0, len(candidates), step)
        ]
    )


def _ranked(scores: np.ndarray, fits: np.ndarray) -> np.ndarray:
    """The rows from the least score up, ties to one that fits, then to the first."""
    return np.lexsort((np.arange(len(scores)), ~fits, scores))


def _climb(
    start: np.ndarray, score: float, targets: np.ndarray, known: set[bytes], n: int, k: int, run: Run
) -> tuple[np.ndarray, float]:
    """Hill climbing from code row `start`: the best code one position away while it scores less
    (`targets`: the codes that fit, encoded; `known`: their rows' bytes)."""
    engine = _engine(n, k)
    while True:
        run.raise_if_stopped()
        near = np.repeat(start[None, :], n * (k - 1), 0)
        index = 0
        for position in range(n):
            for colour in range(k):
                if colour != start[position]:
                    near[index, position] = colour
                    index += 1
        scores = _scores(engine.encode(near), targets, n, k)
        fits = np.array([row.tobytes() in known for row in near])
        best = int(_ranked(scores, fits)[0])
        if scores[best] >= score:
            return start, score
        start, score = near[best], float(scores[best])


def choose(codes: np.ndarray, n: int, k: int, rng: random.Random, run: Run) -> Code:
    """The guess of the least expected_cost for the codes that fit (rows `codes`): see the module's
    docstring."""
    engine = _engine(n, k)
    room = min(MAX_RANDOM, max(0, BUDGET // len(codes) - len(codes)))
    pool = np.concatenate([codes, _random_codes(n, k, room, rng)]).astype(np.int8)
    fits = np.zeros(len(pool), dtype=bool)
    fits[: len(codes)] = True
    targets, known = engine.encode(codes), {row.tobytes() for row in codes}
    scores = _scores(engine.encode(pool), targets, n, k)
    order = _ranked(scores, fits)[:CLIMB_STARTS]
    best_code, best_score = pool[order[0]], float(scores[order[0]])
    for row in order:
        code, score = _climb(pool[row], float(scores[row]), targets, known, n, k, run)
        if score < best_score:
            best_code, best_score = code, score
    return tuple(int(c) for c in best_code)


def decide_middle(n: int, k: int, history: History, rng: random.Random, run: Run) -> Decision | None:
    """The middle game's guess, or None where it does not play (another size, no history, at most
    stronger.PREVIOUS_ENDGAME or more than MAX_TARGETS codes fit, or too many group pairs to meet in the
    middle)."""
    if not history or not middle_fits(n, k):
        return None
    try:
        split = _Split(n, k, history, run)
    except _TooManyPairs:
        return None
    if not _endgame_size(n, k) < split.count <= MAX_TARGETS:
        return None
    codes = np.array(split.codes(), dtype=np.int8).reshape(split.count, n)
    return Decision(choose(codes, n, k, rng, run), "best", split.count, split.count)

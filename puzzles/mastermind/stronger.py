"""Strategy `best` for the middle sizes (`engine_fits`: k**n above ALL_LIMIT, n ≤ 10, k ≤ 8, a half code
of at most HALF_CODES values; e.g. 5×8 and 8×6): candidates beyond the codes that fit, scored fast, and an
exact end game. Chosen per size by measurement: it played 5×8 and 8×6 better than the previous `best`
on the same secrets, and 6×9 worse (6.333 against 6.283 over 300 secrets of seed 1, 6.387 against 6.310
over 300 of seed 2, with entropy or with fewest expected turns in the middle game), so k ≥ 9 keeps the
previous `best`. With the opening book (`book`: the first two guesses at 5×8, 8×6 and 6×9) the two were
even at 6×9 (after the book, this strategy 6.276 over 500 secrets of seed 1 and 6.276 over 700 of seed
101, the previous one 6.284 and 6.259), so at k = 9 (`endgame_fits`) the previous `best` still plays the
middle game, and this strategy's exact end game takes over once at most PREVIOUS_ENDGAME codes fit
(with 40: 6.272 and 6.251 on the same secrets). Since then `middle` plays the 6×9 middle game instead
wherever at most middle.MAX_TARGETS codes fit (always, after the books).

* Feedback by table look-ups (`_Engine`): the blacks of a code are the blacks of its two halves (two
  tables of half codes), and black + white depends only on the two codes' colour-count vectors (one
  table of count vectors), so a class costs three gathers instead of n comparisons and k minimums.
* The codes that fit are listed (k**n ≤ ENUM_LIMIT) or met in the middle (`split._Split`): all of them
  are the targets up to TARGETS, else TARGETS uniform draws.
* Middle game: the candidates are codes that fit and as many random codes of the whole space (within
  BUDGET class evaluations per turn); the largest feedback entropy over the targets wins (ties to a code
  that fits, then to the first), refined by hill climbing.
* Third-turn decisions are kept per process (`_THIRD`): a play shard's memo is its own, and the third
  turn, the dearest, has a few thousand histories at most. At 8×6 and 6×9 the third guess after the
  opening book comes from the third-turn book (`third`) instead, where one is stored.
* End game (at most ENDGAME codes fit; ENDGAME_AT's at 7×7): the least total number of guesses for them,
  searched exactly (`optimal.Search` on a local table) over the codes that fit and the EXTRA other codes
  that split them into the most parts.

The strategy before this one (`best` in strategies, sampled consistent candidates) stays reachable as
strategy PREVIOUS, for the benchmark's baseline only (the schema does not offer it).
"""

from __future__ import annotations

import dataclasses
import random
from functools import lru_cache
from typing import TYPE_CHECKING, cast

import numpy as np

from puzzles.mastermind.codes import ENUM_LIMIT, Code, History, _consistent_codes
from puzzles.mastermind.model import _Session, conflicting_entries
from puzzles.mastermind.sampled import _split_climb
from puzzles.mastermind.scoring import Decision, _opening, _rng
from puzzles.mastermind.split import _count_vectors, _Split, _TooManyPairs, split_fits
from puzzles.runtime import Run

if TYPE_CHECKING:
    from puzzles.mastermind.optimal import Search

#: the previous `best` (for the benchmark's baseline)
PREVIOUS = "best-previous"
#: a half code has at most this many values (two tables of HALF_CODES² blacks)
HALF_CODES = 4096
#: the sizes this strategy plays: above "all" (their `best` was measured on samples), up to n = 10 and
#: k = 8 (measured: see the module docstring)
SPACE_ABOVE = 5_000
MAX_LENGTH = 10
MAX_COLOURS = 8
#: the colours at which the previous best plays the middle game and this strategy the end game
ENDGAME_COLOURS = 9
#: targets scored against, class evaluations per turn, and the end game's size and extra candidates
TARGETS = 1_000
BUDGET = 1_000_000
#: (the end game from 120 codes, not 40: walked over the same 1,500 random subtrees three guesses down at
#: 8×6, 100,000 secrets, 0.0025 fewer guesses a secret from 70 codes, 0.0031 from 90, 0.0041 from 120)
ENDGAME = 120
#: larger at 7×7 (where `middle` plays the middle game above it): over 150 random parts of more than 120
#: codes three guesses down (51,543 secrets), 200 codes took 0.0015 ± 0.0009 fewer guesses a secret than
#: 120 (extrapolated to all 1,695 such parts), at 2.4 times their CPU
ENDGAME_AT = {(7, 7): 200}
#: the same where the previous best plays the middle game (`endgame_fits`): from 200 codes, not 70 (over
#: 700 random subtrees of 6×9, 57,611 secrets: 0.0022 fewer guesses a secret from 120 codes, 0.0066 from
#: 200, the fourth-turn book no longer played where it leaves at most 200)
PREVIOUS_ENDGAME = 200
#: (50, not 200: the same guesses on those 8×6 subtrees but for 7 of 1,500, at a third of the search's time;
#: 500 changed none)
EXTRA = 50
#: third-turn decisions kept per process (a play shard's memo is its own; the third turn is the dearest and
#: a few thousand histories cover every game of a size)
THIRD_CACHE = 20_000
_THIRD: dict[tuple[int, int, History, int], Decision] = {}


def engine_fits(n: int, k: int) -> bool:
    """Whether this strategy plays n×k."""
    return (
        k**n > SPACE_ABOVE
        and n <= MAX_LENGTH
        and k <= MAX_COLOURS
        and k ** (n - n // 2) <= HALF_CODES
        and split_fits(n, k)
    )


def _codes_of(length: int, k: int) -> np.ndarray:
    index = np.arange(k**length, dtype=np.int64)
    return np.stack([index // k ** (length - 1 - i) % k for i in range(length)], 1).reshape(k**length, length)


class _Engine:
    """Feedback classes of many codes against many, by table look-ups (see the module docstring)."""

    def __init__(self, n: int, k: int):
        self.n, self.k = n, k
        self.high = n // 2
        tables = []
        for length in (self.high, n - self.high):
            half = _codes_of(length, k)
            tables.append((half[:, None, :] == half[None, :, :]).sum(2).astype(np.uint8))
        self.black_high, self.black_low = tables
        vectors, numbers = _count_vectors(n, k)
        order = np.argsort(numbers)
        self.numbers, vectors = numbers[order], vectors[order]
        self.common = np.empty((len(vectors), len(vectors)), dtype=np.uint8)
        step = max(1, 2_000_000 // (len(vectors) * k))
        for start in range(0, len(vectors), step):
            block = vectors[start : start + step]
            self.common[start : start + step] = np.minimum(block[:, None, :], vectors[None, :, :]).sum(2)
        self.powers = [k ** np.arange(m - 1, -1, -1, dtype=np.int64) for m in (self.high, n - self.high)]
        self.count_base = (n + 1) ** np.arange(k, dtype=np.int64)

    def encode(self, codes: np.ndarray) -> np.ndarray:
        """Rows (high half, low half, count vector) of code rows."""
        codes = codes.astype(np.int64)
        high = codes[:, : self.high] @ self.powers[0]
        low = codes[:, self.high :] @ self.powers[1]
        counts = np.stack([(codes == c).sum(1) for c in range(self.k)], 1) @ self.count_base
        return np.stack([high, low, np.searchsorted(self.numbers, counts)], 1)

    def classes(self, candidates: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """class[i, j] (as codes._feedback_class) of encoded candidate i against encoded target j."""
        black = self.black_high[candidates[:, None, 0], targets[None, :, 0]]
        black += self.black_low[candidates[:, None, 1], targets[None, :, 1]]
        common = self.common[candidates[:, None, 2], targets[None, :, 2]]
        return cast(np.ndarray, black * np.uint8(self.n + 1) + common)


def endgame_size(n: int, k: int) -> int:
    """The most codes the exact end game takes at an ENGINE size (ENDGAME, or ENDGAME_AT's)."""
    return ENDGAME_AT.get((n, k), ENDGAME)


@lru_cache(maxsize=4)
def _engine(n: int, k: int) -> _Engine:
    return _Engine(n, k)


def _sizes(classes: np.ndarray, n: int) -> np.ndarray:
    """Per candidate row, the size of each feedback class."""
    width = (n + 1) * (n + 1)
    flat = (classes.astype(np.int64) + width * np.arange(len(classes))[:, None]).ravel()
    return np.bincount(flat, minlength=width * len(classes)).reshape(len(classes), width)


@lru_cache(maxsize=1)
def _slogs(size: int) -> np.ndarray:
    sizes = np.arange(size, dtype=np.float64)
    return sizes * np.log(np.maximum(sizes, 1))


def _entropy_key(sizes: np.ndarray) -> np.ndarray:
    """−Σ s·log s (larger is better: N × entropy up to a constant), rounded so equal splits tie."""
    table = _slogs(max(TARGETS, ENDGAME, int(sizes.max())) + 1)
    return cast(np.ndarray, np.round(-table[sizes].sum(1), 9))


def _best_row(primary: np.ndarray, fits: np.ndarray) -> int:
    """The row with the largest primary, ties to one that fits, then to the first."""
    return int(np.lexsort((-np.arange(len(primary)), fits, primary))[-1])


def _random_codes(n: int, k: int, count: int, rng: random.Random) -> np.ndarray:
    generator = np.random.default_rng(rng.getrandbits(64))
    return generator.integers(0, k, (count, n)).astype(np.int8)


def _local_search(n: int, k: int, codes: np.ndarray, extra: np.ndarray) -> tuple[Search, np.ndarray]:
    """An `optimal.Search` over the codes `codes` (its secrets, rows 0..len - 1) with the guesses `codes` and
    `extra`, on a table of those rows only; and the rows."""
    from puzzles.mastermind.optimal import Search  # here: see strategies._decide_optimal

    engine = _engine(n, k)
    rows = np.concatenate([codes, extra]).astype(np.int8)
    return Search(n, k, table=engine.classes(engine.encode(rows), engine.encode(codes))), rows


def _endgame(n: int, k: int, codes: np.ndarray, rng: random.Random, run: Run | None = None) -> Code:
    """The guess of the least total guesses for `codes` (all that fit), over them and the EXTRA other codes
    (of every code, or of random ones) that split them into the most parts (then the largest entropy)."""
    engine = _engine(n, k)
    pool = _codes_of(n, k) if k**n <= 40_000 else _random_codes(n, k, 5_000, rng)
    sizes = _sizes(engine.classes(engine.encode(pool), engine.encode(codes)), n)
    order = np.lexsort((_entropy_key(sizes), (sizes > 0).sum(1)))[::-1][:EXTRA]
    search, rows = _local_search(n, k, codes, pool[order])
    if run is not None:  # a search of 200 codes can take seconds: a stopped job ends it
        search.stop = run.raise_if_stopped
    secrets = np.arange(len(codes), dtype=np.int64)
    search.solve(secrets)
    return tuple(int(c) for c in rows[search.memo[secrets.tobytes()][2]])


def decide_engine(n: int, k: int, history: History, seed: int, samples: int, session: _Session) -> Decision:
    """The next guess of `best` at an ENGINE size (see the module docstring)."""
    run, rng = session.run, _rng(seed, history)
    if not history:
        return Decision(_opening(n, k, "entropy", seed, run), "best", k**n, k**n)
    if k**n <= ENUM_LIMIT:
        listed = _consistent_codes(n, k, history)
        count = len(listed)
        codes = np.array(listed, dtype=np.int8).reshape(count, n)
        targets = codes if count <= TARGETS else codes[np.sort(rng.sample(range(count), TARGETS))]
    else:
        split = _Split(n, k, history, run)  # _TooManyPairs: the caller plays the previous best
        count = split.count
        if count <= TARGETS:
            codes = np.array(split.codes(), dtype=np.int8).reshape(count, n)
            targets = codes
        else:
            targets = np.array(split.sample(rng, TARGETS), dtype=np.int8)
            codes = np.unique(targets, axis=0)
    if count == 0:
        return Decision(None, "best", 0, conflict=conflicting_entries(n, k, history, session))
    decision = Decision(tuple(int(c) for c in codes[0]), "best", count, count)
    if count <= 2:
        return decision
    if count <= endgame_size(n, k):
        decision.guess = _endgame(n, k, codes, rng, run)
        return decision
    run.raise_if_stopped()
    engine = _engine(n, k)
    room = max(200, BUDGET // len(targets))
    inside = codes if len(codes) <= room // 2 else codes[np.sort(rng.sample(range(len(codes)), room // 2))]
    candidates = np.concatenate([inside, _random_codes(n, k, room - len(inside), rng)])
    fits = np.zeros(len(candidates), dtype=bool)
    fits[: len(inside)] = True
    sizes = _sizes(engine.classes(engine.encode(candidates), engine.encode(targets)), n)
    start = candidates[_best_row(_entropy_key(sizes), fits)]
    decision.guess = _split_climb(start, targets, history, "entropy", k, rng, run)
    return decision


def endgame_fits(n: int, k: int) -> bool:
    """Whether the previous best plays n×k with this strategy's exact end game (k = ENDGAME_COLOURS)."""
    return (
        k**n > SPACE_ABOVE
        and n <= MAX_LENGTH
        and k == ENDGAME_COLOURS
        and k ** (n - n // 2) <= HALF_CODES
        and split_fits(n, k)
    )


def _previous_endgame(n: int, k: int, history: History, seed: int, session: _Session) -> Decision | None:
    """The exact end game once 3..PREVIOUS_ENDGAME codes fit, else None (the previous best plays)."""
    if not history:
        return None
    try:
        split = _Split(n, k, history, session.run)
    except _TooManyPairs:
        return None
    if not 2 < split.count <= PREVIOUS_ENDGAME:
        return None
    codes = np.array(split.codes(), dtype=np.int8).reshape(split.count, n)
    guess = _endgame(n, k, codes, _rng(seed, history), session.run)
    return Decision(guess, "best", split.count, split.count)


def listed_endgame_fits(n: int, k: int) -> bool:
    """Whether `best` plays this strategy's exact end game at a size where every code is listed and the
    most parts otherwise (k**n ≤ SPACE_ABOVE: 4×6, 4×7, 5×5, ...)."""
    return 2 <= n <= MAX_LENGTH and k**n <= SPACE_ABOVE and split_fits(n, k)


def _listed_endgame(n: int, k: int, history: History, seed: int, session: _Session) -> Decision | None:
    """The exact end game once 3..ENDGAME codes fit at a small size, else None (the most parts plays).
    Every secret of 4×7: 4.7030 guesses against 4.7430 (from 60 codes 4.7122, from 250 4.6989 at three
    times the time); 5×5: 4.3389 against 4.3475; 4×6: 4.3472 against 4.3735 (the optimum 4.3403)."""
    if not history or not listed_endgame_fits(n, k):
        return None
    listed = _consistent_codes(n, k, history)
    if not 2 < len(listed) <= ENDGAME:
        return None
    codes = np.array(listed, dtype=np.int8).reshape(len(listed), n)
    guess = _endgame(n, k, codes, _rng(seed, history), session.run)
    return Decision(guess, "best", len(listed), len(listed))


def decide_best(
    n: int, k: int, history: History, seed: int, samples: int, session: _Session
) -> Decision | None:
    """`best` at an ENGINE size, or its exact end game at the sizes around it, or None where the previous
    best plays (the rest of those sizes, or a history that leaves too many group pairs to meet in the
    middle). The first two turns come from the opening book
    where one is stored (strategies.decide asks `book` first: the book's builder uses this module)."""
    if not engine_fits(n, k):
        if endgame_fits(n, k):
            return _previous_endgame(n, k, history, seed, session)
        return _listed_endgame(n, k, history, seed, session)
    key = (n, k, history, seed)
    if key in _THIRD:
        return dataclasses.replace(_THIRD[key])
    try:
        decision = decide_engine(n, k, history, seed, samples, session)
    except _TooManyPairs:
        return None
    if len(history) == 2 and decision.guess is not None and len(_THIRD) < THIRD_CACHE:
        _THIRD[key] = dataclasses.replace(decision)
    return decision

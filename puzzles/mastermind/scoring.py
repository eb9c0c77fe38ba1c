"""Choosing among candidate guesses in plain Python: how well a candidate splits the target codes into
feedback classes (minimax, most parts or feedback entropy; ties to a consistent code, then to pool order),
hill climbing from a candidate, and the first guess (cached per process).

Randomness is seeded by the seed and the history (`_rng`), so the same history always gets the same guess.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from puzzles.mastermind.codes import ENUM_LIMIT, Code, History, _openings, _Targets, all_codes
from puzzles.runtime import Run

#: feedback evaluations per turn for scoring every canonical code as a candidate (`best`)
POOL_BUDGET = 400_000
#: uniform codes drawn to score the first guess when k**n > ENUM_LIMIT
OPENING_TARGETS = 1_000


@dataclass
class Decision:
    guess: Code | None
    strategy: str
    remaining: int | None = None
    remaining_at_least: int = 0
    note: str | None = None
    conflict: list[int] | None = None


def _rng(seed: int, history: History) -> random.Random:
    """A generator seeded by the seed and the history: the same history always gets the same guess."""
    digest = hashlib.blake2b(repr((seed, history)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _key(
    candidate: Code, targets: _Targets, consistent: set[Code] | None, objective: str
) -> tuple[float, bool]:
    """How well `candidate` splits `targets` (larger is better), then whether it could be the secret."""
    sizes = Counter(targets.classes(candidate)).values()
    primary: float
    if objective == "minimax":
        primary = -max(sizes)
    elif objective == "parts":
        primary = len(sizes)
    else:  # entropy: −Σ s·log s is N × entropy up to a constant; rounded so equal splits tie exactly
        primary = round(-sum(s * math.log(s) for s in sizes if s > 1), 9)
    return primary, consistent is None or candidate in consistent


def _pick(
    pool: Sequence[Code], targets: _Targets, consistent: set[Code] | None, objective: str, run: Run
) -> tuple[Code, tuple[float, bool]]:
    """The candidate splitting `targets` best (ties to a consistent one, then to pool order), and its key."""
    best, best_key = pool[0], None
    for index, candidate in enumerate(pool):
        if index % 64 == 0:
            run.raise_if_stopped()
        key = _key(candidate, targets, consistent, objective)
        if best_key is None or key > best_key:
            best, best_key = candidate, key
    assert best_key is not None  # the pool has a first candidate: the loop ran
    return best, best_key


def _climb(
    start: Code,
    targets: _Targets,
    consistent: set[Code],
    objective: str,
    rng: random.Random,
    run: Run,
    rounds: int = 8,
    neighbours: int = 120,
) -> Code:
    """Hill climbing from `start`: recolour one position while that splits `targets` better."""
    best = start
    best_key = _key(start, targets, consistent, objective)
    for _ in range(rounds):
        moves = [(i, c) for i in range(len(best)) for c in range(targets.k) if c != best[i]]
        if len(moves) > neighbours:
            moves = rng.sample(moves, neighbours)
        pool = [best[:i] + (c,) + best[i + 1 :] for i, c in moves]
        candidate, key = _pick(pool, targets, consistent, objective, run)
        if key <= best_key:
            break
        best, best_key = candidate, key
    return best


_OPENING_CACHE: dict[tuple[int, int, str, int], Code] = {}


def _opening(n: int, k: int, objective: str, seed: int, run: Run) -> Code:
    """The first guess: the best opening pattern against every code (or, over the budget, a uniform sample).
    Cached per process, since every game of a play job starts with it."""
    key = (n, k, objective, seed)
    if key not in _OPENING_CACHE:
        pool, rng = _openings(n, k), _rng(seed, ())
        budget = POOL_BUDGET // len(pool)
        if k**n <= ENUM_LIMIT and (objective == "minimax" or k**n <= budget):
            targets: Sequence[Code] = all_codes(n, k)
        elif k**n <= ENUM_LIMIT:
            targets = rng.sample(all_codes(n, k), budget)
        else:
            targets = [tuple(rng.choices(range(k), k=n)) for _ in range(OPENING_TARGETS)]
        _OPENING_CACHE[key] = _pick(pool, _Targets(targets, k), None, objective, run)[0]
    return _OPENING_CACHE[key]

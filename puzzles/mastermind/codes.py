"""Codes and their feedback: scoring a guess, feedback classes, and listing codes (every code, the codes that
fit a history, one code per class of colour permutations, and the first-guess patterns).

A code is n colours in 0..k-1. Feedback: black = right colour in the right place; white = Σ over colours of
min(count in secret, count in guess) − black.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from functools import lru_cache
from operator import eq

Code = tuple[int, ...]
Entry = tuple[Code, int, int]  # (guess, black, white)
History = tuple[Entry, ...]

#: k**n up to this: the consistent codes are listed in plain Python
ENUM_LIMIT = 100_000
#: canonical codes listed at most (more: candidates are sampled consistent codes)
CANONICAL_CAP = 20_000


def score(secret: Sequence[int], guess: Sequence[int]) -> tuple[int, int]:
    """(black, white) of `guess` against `secret`."""
    black = sum(map(eq, secret, guess))
    common = sum(min(secret.count(colour), guess.count(colour)) for colour in set(guess))
    return black, common - black


def _feedback_class(n: int, black: int, white: int) -> int:
    """A small int per feedback: black × (n + 1) + black + white."""
    return black * (n + 1) + black + white


def _counts(code: Code, k: int) -> tuple[int, ...]:
    counts = [0] * k
    for colour in code:
        counts[colour] += 1
    return tuple(counts)


class _Targets:
    """Codes a candidate is scored against, with their colour counts precomputed."""

    def __init__(self, codes: Sequence[Code], k: int):
        self.codes = list(codes)
        self.counts = [_counts(code, k) for code in self.codes]
        self.k = k

    def __len__(self) -> int:
        return len(self.codes)

    def classes(self, guess: Code) -> list[int]:
        """The feedback class of `guess` against each target."""
        stride = len(guess) + 1
        gcounts = _counts(guess, self.k)
        pairs = zip(self.codes, self.counts, strict=True)
        if self.k <= 2 * len(guess):
            return [
                sum(map(eq, code, guess)) * stride + sum(map(min, counts, gcounts)) for code, counts in pairs
            ]
        used = [(colour, m) for colour, m in enumerate(gcounts) if m]
        return [
            sum(map(eq, code, guess)) * stride + sum(min(counts[c], m) for c, m in used)
            for code, counts in pairs
        ]


def _fits(code: Code, history: History) -> bool:
    return all(score(code, guess) == (black, white) for guess, black, white in history)


# -- listing codes -----------------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def all_codes(n: int, k: int) -> tuple[Code, ...]:
    """Every code, in lexicographic order."""
    return tuple(itertools.product(range(k), repeat=n))


def code_at(index: int, n: int, k: int) -> Code:
    """The index-th code in lexicographic order."""
    digits = []
    for _ in range(n):
        index, digit = divmod(index, k)
        digits.append(digit)
    return tuple(reversed(digits))


@lru_cache(maxsize=1024)
def _consistent_codes(n: int, k: int, history: History) -> tuple[Code, ...]:
    """Every code that fits the history (k**n ≤ ENUM_LIMIT), filtered one entry at a time: a game's
    histories share their prefixes, so each turn filters only the previous turn's codes."""
    if not history:
        return all_codes(n, k)
    previous = _consistent_codes(n, k, history[:-1])
    guess, black, white = history[-1]
    wanted = _feedback_class(n, black, white)
    classes = _Targets(previous, k).classes(guess)
    return tuple(code for code, cls in zip(previous, classes, strict=True) if cls == wanted)


@lru_cache(maxsize=64)
def _canonical_codes(n: int, k: int, used: frozenset[int]) -> tuple[Code, ...] | None:
    """Codes in lexicographic order whose colours outside `used` first appear in increasing order, lowest
    first (one per class of codes equivalent under permutations of those colours); None if over the cap."""
    free_rank = {colour: rank for rank, colour in enumerate(c for c in range(k) if c not in used)}

    def extend(prefix: list[int], next_free: int) -> Iterator[Code]:
        if len(prefix) == n:
            yield tuple(prefix)
            return
        for colour in range(k):
            rank = free_rank.get(colour)
            if rank is None or rank <= next_free:
                prefix.append(colour)
                yield from extend(prefix, next_free + (rank == next_free))
                prefix.pop()

    codes = tuple(itertools.islice(extend([], 0), CANONICAL_CAP + 1))
    return None if len(codes) > CANONICAL_CAP else codes


def _partitions(n: int, parts: int, largest: int) -> Iterator[list[int]]:
    if n == 0:
        yield []
        return
    if parts:
        for first in range(min(n, largest), 0, -1):
            for rest in _partitions(n - first, parts - 1, first):
                yield [first, *rest]


@lru_cache(maxsize=16)
def _openings(n: int, k: int, limit: int = 300) -> tuple[Code, ...]:
    """First-guess candidates: colour blocks of decreasing size, one per partition of n into at most k parts
    (every first guess is equivalent to one of them); if there are too many, the balanced ones only."""
    partitions = list(itertools.islice(_partitions(n, min(n, k), n), limit + 1))
    if len(partitions) > limit:
        partitions = [[n // m + (i < n % m) for i in range(m)] for m in range(1, min(n, k) + 1)]
    return tuple(
        sorted({tuple(c for colour, size in enumerate(p) for c in [colour] * size) for p in partitions})
    )

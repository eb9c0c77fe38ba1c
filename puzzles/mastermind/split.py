"""Meet in the middle: every code that fits a history, counted exactly and drawn uniformly (`_Split`), while
half a code has few enough values (`split_fits`: n = 16, k = 6 does).

Left and right halves are joined on their black counts, then filtered on their summed colour counts.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from functools import lru_cache
from typing import cast

import numpy as np

from puzzles.mastermind.codes import ENUM_LIMIT, Code, History, _consistent_codes
from puzzles.runtime import Run

#: meet in the middle (_Split) while a half code has at most HALF_LIMIT values, a code at most
#: COUNT_VECTORS_LIMIT colour-count vectors, and a history leaves at most PAIRS_LIMIT group pairs
HALF_LIMIT = 2_000_000
COUNT_VECTORS_LIMIT = 200_000
PAIRS_LIMIT = 400_000_000
PAIRS_CHUNK = 4_000_000


def _compositions(n: int, k: int) -> Iterator[tuple[int, ...]]:
    if k == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _compositions(n - first, k - 1):
            yield (first, *rest)


@lru_cache(maxsize=4)
def _half_codes(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every code of length m (rows, lexicographic) and its colour counts as one base-(n + 1) number."""
    index = np.arange(k**m, dtype=np.int64)
    codes = np.stack([index // k ** (m - 1 - i) % k for i in range(m)], 1).astype(np.int8).reshape(k**m, m)
    base = (n + 1) ** np.arange(k, dtype=np.int64)
    counts = np.stack([(codes == colour).sum(1) for colour in range(k)], 1).astype(np.int64)
    return codes, counts @ base


def _half_blacks(m: int, k: int, guess: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The blacks of half codes `rows` (of _half_codes(m, k, ·)) against `guess`: as the sum of the blacks
    of their two quarters, looked up in the quarters' tables."""
    low = m // 2
    tables = []
    for start, size in ((0, m - low), (m - low, low)):
        index = np.arange(k**size, dtype=np.int64)
        digits = [index // k ** (size - 1 - i) % k for i in range(size)]
        tables.append(sum((d == guess[start + i]).astype(np.int64) for i, d in enumerate(digits)))
    high_part, low_part = np.divmod(rows, k**low)
    return cast(np.ndarray, tables[0][high_part] + tables[1][low_part])


@lru_cache(maxsize=8)
def _count_vectors(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every colour-count vector of a code (rows) and its base-(n + 1) number."""
    vectors = np.array(list(_compositions(n, k)), dtype=np.int64)
    return vectors, vectors @ ((n + 1) ** np.arange(k, dtype=np.int64))


def split_fits(n: int, k: int) -> bool:
    """Whether _Split can hold this size: halves of at most HALF_LIMIT codes, few count vectors, and count
    vectors that fit an int64 as base-(n + 1) numbers (with room for a key)."""
    return (
        n >= 4
        and k ** ((n + 1) // 2) <= HALF_LIMIT
        and math.comb(n + k - 1, k - 1) <= COUNT_VECTORS_LIMIT
        and (n + 1) ** k <= 2**31
    )


class _Split:
    """The codes that fit a history, as pairs of halves (meet in the middle), counted exactly and drawn
    uniformly.

    A code fits iff each guess's black count is the sum of its halves' black counts and its colour counts
    (the sum of its halves' counts) give every guess's black + white. Each half code gets a key (its black
    counts, or for the right half the blacks still missing) and is grouped by key and colour counts; a left
    and a right group pair up when their keys match and their summed counts fit, and hold |left| × |right|
    codes. A uniform code: a group pair drawn by weight, then a member of each group."""

    def __init__(self, n: int, k: int, history: History, run: Run):
        self.n, self.k = n, k
        self.sizes = (n // 2, n - n // 2)
        guesses = np.array([g for g, _, _ in history], dtype=np.int8).reshape(len(history), n)
        blacks = np.array([b for _, b, _ in history], dtype=np.int64)
        commons = np.array([b + w for _, b, w in history], dtype=np.int64)
        guess_counts = np.stack([(guesses == c).sum(1) for c in range(k)], 1).astype(np.int64)
        vectors, numbers = _count_vectors(n, k)
        fitting = (np.minimum(vectors[:, None, :], guess_counts[None, :, :]).sum(2) == commons).all(1)
        valid = np.sort(numbers[fitting])
        sides, keys = self._keys(guesses, blacks, run)
        run.raise_if_stopped()
        shared = np.intersect1d(keys[0], keys[1])
        self.groups = []
        for side, (members, key) in enumerate(zip(sides, keys, strict=True)):
            mask = np.isin(key, shared)
            members, key = members[mask], key[mask]
            number = _half_codes(self.sizes[side], k, n)[1][members]
            order = np.lexsort((number, key))
            members, key, number = members[order], key[order], number[order]
            new = np.ones(len(key), dtype=bool)
            new[1:] = (key[1:] != key[:-1]) | (number[1:] != number[:-1])
            starts = np.flatnonzero(new)
            sizes = np.diff(np.append(starts, len(key)))
            self.groups.append((key[starts], number[starts], starts, sizes, members))
        (key_l, number_l, _, size_l, _), (key_r, number_r, _, size_r, _) = self.groups
        low, high = np.searchsorted(key_r, key_l, "left"), np.searchsorted(key_r, key_l, "right")
        per_left = high - low
        if per_left.sum() > PAIRS_LIMIT:
            raise _TooManyPairs
        # pairs in chunks of left groups, keeping those whose summed colour counts fit
        lefts, rights = [], []
        ends = np.searchsorted(np.cumsum(per_left), np.arange(PAIRS_CHUNK, per_left.sum(), PAIRS_CHUNK))
        for chunk in np.split(np.arange(len(key_l)), ends):
            run.raise_if_stopped()
            count = per_left[chunk]
            left = np.repeat(chunk, count)
            right = np.repeat(low[chunk] - np.cumsum(count) + count, count) + np.arange(len(left))
            fits = np.isin(number_l[left] + number_r[right], valid)
            lefts.append(left[fits])
            rights.append(right[fits])
        self.left, self.right = np.concatenate(lefts), np.concatenate(rights)
        self.cumulative = np.cumsum(size_l[self.left] * size_r[self.right])
        self.count = int(self.cumulative[-1]) if len(self.cumulative) else 0

    def _keys(
        self, guesses: np.ndarray, blacks: np.ndarray, run: Run
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per side, the half codes that can be part of a fitting code (rows of _half_codes) and their keys:
        the blacks they score (left) or the blacks the other half must score (right), as one mixed-radix
        int64, renumbered densely whenever the radix grows large."""
        sides = [np.arange(len(_half_codes(m, self.k, self.n)[0]), dtype=np.int64) for m in self.sizes]
        keys = [np.zeros(len(members), dtype=np.int64) for members in sides]
        radix = 1
        for j, guess in enumerate(guesses):
            run.raise_if_stopped()
            start = 0
            for side, m in enumerate(self.sizes):
                part = _half_blacks(m, self.k, guess[start : start + m], sides[side])
                start += m
                # a half scores at most the guess's blacks, and at least what the other half cannot
                keep = (part <= blacks[j]) & (part >= blacks[j] - (self.n - m))
                part = part if side == 0 else blacks[j] - part
                sides[side], keys[side] = sides[side][keep], keys[side][keep] + part[keep] * radix
            radix *= int(blacks[j]) + 1
            if radix > 2**56:
                distinct, dense = np.unique(np.concatenate(keys), return_inverse=True)
                keys = [dense[: len(keys[0])].astype(np.int64), dense[len(keys[0]) :].astype(np.int64)]
                radix = len(distinct)
        return sides, keys

    def _codes(self, left_rows: np.ndarray, right_rows: np.ndarray) -> list[Code]:
        left = _half_codes(self.sizes[0], self.k, self.n)[0][left_rows]
        right = _half_codes(self.sizes[1], self.k, self.n)[0][right_rows]
        return [tuple(row) for row in np.concatenate([left, right], 1).tolist()]

    def sample(self, rng: random.Random, size: int) -> list[Code]:
        """`size` codes drawn uniformly (with replacement) from those that fit."""
        generator = np.random.default_rng(rng.getrandbits(64))
        (_, _, start_l, size_l, members_l), (_, _, start_r, size_r, members_r) = self.groups
        pair = np.searchsorted(self.cumulative, generator.integers(0, self.count, size), "right")
        left, right = self.left[pair], self.right[pair]
        left_rows = members_l[start_l[left] + generator.integers(0, size_l[left])]
        right_rows = members_r[start_r[right] + generator.integers(0, size_r[right])]
        return self._codes(left_rows, right_rows)

    def codes(self) -> list[Code]:
        """Every code that fits, in lexicographic order."""
        (_, _, start_l, size_l, members_l), (_, _, start_r, size_r, members_r) = self.groups
        left_rows, right_rows = [], []
        for left, right in zip(self.left.tolist(), self.right.tolist(), strict=True):
            ls = members_l[start_l[left] : start_l[left] + size_l[left]]
            rs = members_r[start_r[right] : start_r[right] + size_r[right]]
            left_rows.append(np.repeat(ls, len(rs)))
            right_rows.append(np.tile(rs, len(ls)))
        if not left_rows:
            return []
        return sorted(self._codes(np.concatenate(left_rows), np.concatenate(right_rows)))


class _TooManyPairs(Exception):
    """The history leaves too many group pairs for _Split (only very early in huge spaces)."""


def exact_count(n: int, k: int, history: History, run: Run) -> int | None:
    """How many codes fit the history, exactly, when that is cheap (listed, or counted by meeting in the
    middle); otherwise None."""
    if k**n <= ENUM_LIMIT:
        return len(_consistent_codes(n, k, history))
    if not split_fits(n, k):
        return None
    try:
        return _Split(n, k, history, run).count
    except _TooManyPairs:
        return None

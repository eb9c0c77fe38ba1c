"""Mastermind: the next guess for a history of feedback (kind `mastermind.guess`), and whole games against
many secrets, sharded by secret (kind `mastermind.play`).

A code is n colours in 0..k-1. Feedback: black = right colour in the right place; white = Σ over colours of
min(count in secret, count in guess) − black.

Strategies:

* `consistent` — the seed's AI: one SAT model of "the secret fits every feedback" (a Boolean per position ×
  colour; per feedback, a cardinality constraint for black, and one over per-colour "count ≥ j" bits for
  black + white); the solver's first model.
* `minimax` — Knuth: every code is a candidate; the smallest worst-case feedback class wins, ties to a
  consistent code, then to the lexicographically smallest. Only for k**n ≤ MINIMAX_LIMIT; above it `best`
  plays instead and `note` says so.
* `best` — "most parts": the candidate splitting the consistent codes into the most feedback classes, ties
  to a consistent code, then the smallest. With k**n ≤ ENUM_LIMIT the consistent codes are listed exactly
  and every code is a candidate (within POOL_BUDGET feedback evaluations). Above it, while half a code
  has few enough values (`split_fits`: n = 16, k = 6 does), the consistent codes are counted exactly by
  meeting in the middle (`_Split`: left and right halves joined on their black counts, then filtered on
  their summed colour counts) and drawn uniformly: all of them when at most SPLIT_LIST_LIMIT (most parts
  wins), else SPLIT_TARGETS draws (largest feedback entropy wins); the candidates are `samples` of those
  codes, refined by hill climbing. Larger spaces sample uniformly by rejection while consistent codes are
  common enough, else take `samples` distinct SAT models, each pulled towards a random code; the
  candidates are the sampled codes (refined by hill climbing when the sample is uniform or complete) and
  the largest feedback entropy over the sample wins.

Codes that differ by a permutation of the colours no history guess used split every set alike, so only the
lexicographically smallest of each such class is a candidate; the first guess is one per partition of n.

Every guess is a function of the params and the history (randomness is seeded by both), so a game or a
shard replays identically. Z3's models also depend on what ran before in the same context, and a play shard
keeps one context (each costs ~17 MB until the run ends): where Z3 picks the guess, a `guess` call can pick
a different, equally valid, code than a game did at the same history.

`guess` result: `status` ("ok", "solved", "contradiction"), `guess`, `consistent`, `remaining` (exactly how
many codes fit the history, or None when that is not known), `remaining_at_least` (a lower bound: equal to
`remaining` when that is known, else the distinct fitting codes seen), `strategy` (the one that played),
`note` (why it differs from the one asked, or None), `seconds`, and for a contradiction `error` =
{code: 422, message, entries: [history indexes of a minimal conflicting set]}.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import eq
from typing import Any

import numpy as np
import z3

from puzzles.runtime import Run, SolverGaveUp
from puzzles.sharding import ShardResult, solve_in_process

Code = tuple[int, ...]
Entry = tuple[Code, int, int]  # (guess, black, white)
History = tuple[Entry, ...]

STRATEGIES = ("consistent", "minimax", "best")
DEFAULT_SAMPLES = 100
#: k**n up to this: the consistent codes are listed in plain Python
ENUM_LIMIT = 100_000
#: Knuth's minimax scores every code against every consistent code
MINIMAX_LIMIT = 10_000
#: `secrets: "all"` plays every code, so only this many
ALL_LIMIT = 5_000
#: feedback evaluations per turn for scoring every canonical code as a candidate (`best`)
POOL_BUDGET = 400_000
#: canonical codes listed at most (more: candidates are sampled consistent codes)
CANONICAL_CAP = 20_000
#: consistent codes partitioned at most when the full list is longer (a uniform sample of it)
TARGETS_CAP = 600
#: uniform codes drawn to score the first guess when k**n > ENUM_LIMIT
OPENING_TARGETS = 1_000
#: rejection sampling: the consistent codes wanted, the draws allowed, and the fewest that count as enough
REJECTION_TARGETS = 400
REJECTION_TRIES = 40_000
REJECTION_ENOUGH = 100
#: conflicts a sampling check may take before it drops its pull, and a counting check before counting stops
SAMPLE_CONFLICTS = 1_000
COUNT_CONFLICTS = 200
#: `guess` counts the codes that fit a large history by SAT enumeration up to this many
COUNT_CAP = 100
#: a SAT model costs about n × k; sampling and counting draw at most SAT_WORK / (n × k) models (at least 8)
SAT_WORK = 24_000
#: meet in the middle (_Split) while a half code has at most HALF_LIMIT values, a code at most
#: COUNT_VECTORS_LIMIT colour-count vectors, and a history leaves at most PAIRS_LIMIT group pairs
HALF_LIMIT = 2_000_000
COUNT_VECTORS_LIMIT = 200_000
PAIRS_LIMIT = 400_000_000
PAIRS_CHUNK = 4_000_000
#: _Split lists every consistent code up to this many, else draws SPLIT_TARGETS of them uniformly
SPLIT_LIST_LIMIT = 1_000
SPLIT_TARGETS = 600
#: a play shard aims at this many seconds
SHARD_SECONDS = 5.0


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


# -- the SAT model -----------------------------------------------------------------------------------------


class _Model:
    """The seed's encoding of "the secret fits every feedback"."""

    def __init__(self, n: int, k: int, history: History, ctx: z3.Context, tracked: bool = False):
        self.n, self.k, self.ctx = n, k, ctx
        self.solver = z3.SolverFor("QF_FD", ctx=ctx)
        self.x = [[z3.Bool(f"x{i}_{c}", ctx) for c in range(k)] for i in range(n)]
        for row in self.x:
            self.solver.add(z3.PbEq([(v, 1) for v in row], 1))
        self._count_bits: dict[int, list[z3.BoolRef]] = {}
        self._value: z3.ArithRef | None = None
        self._negated: list[list[z3.BoolRef]] | None = None
        #: with `tracked`, entry i holds only under the assumption indicators[i] (for unsat cores)
        self.indicators: list[z3.BoolRef] = []
        for index, entry in enumerate(history):
            self._add(entry, z3.Bool(f"entry{index}", ctx) if tracked else None)

    def _at_least(self, colour: int, m: int) -> list[z3.BoolRef]:
        """Bits 1..m of the secret's count of `colour`: bit j holds iff the count is at least j."""
        bits = self._count_bits.setdefault(colour, [])
        column = [self.x[i][colour] for i in range(self.n)]
        while len(bits) < m:
            bit = z3.Bool(f"count{colour}_ge{len(bits) + 1}", self.ctx)
            self.solver.add(bit == z3.AtLeast(*column, len(bits) + 1))
            bits.append(bit)
        return bits[:m]

    def _add(self, entry: Entry, indicator: z3.BoolRef | None) -> None:
        guess, black, white = entry
        # min(count in secret, count in guess) = how many of the first (count in guess) count bits hold
        common = [bit for colour, m in Counter(guess).items() for bit in self._at_least(colour, m)]
        constraints = [
            z3.PbEq([(self.x[i][c], 1) for i, c in enumerate(guess)], black),
            z3.PbEq([(b, 1) for b in common], black + white),
        ]
        if indicator is None:
            self.solver.add(*constraints)
        else:
            self.indicators.append(indicator)
            self.solver.add(*(z3.Implies(indicator, c) for c in constraints))

    def code(self) -> Code:
        # one eval of the code as a base-k number: far faster than an eval per Boolean
        if self._value is None:
            ctx, n, k = self.ctx, self.n, self.k
            zero = z3.IntVal(0, ctx)
            terms = [
                z3.If(self.x[i][c], z3.IntVal(c * k ** (n - 1 - i), ctx), zero)
                for i in range(n)
                for c in range(1, k)
            ]
            self._value = z3.Sum([*terms, zero])
        value = self.solver.model().eval(self._value, model_completion=True).as_long()
        return code_at(value, self.n, self.k)

    def block(self, code: Code) -> None:
        if self._negated is None:
            self._negated = [[z3.Not(v) for v in row] for row in self.x]
        # Z3_mk_or directly: z3.Or's argument coercion costs more than the solver check here
        lits = (z3.Ast * self.n)(*(self._negated[i][c].as_ast() for i, c in enumerate(code)))
        self.solver.add(z3.BoolRef(z3.Z3_mk_or(self.ctx.ref(), self.n, lits), self.ctx))

    def next_code(self, run: Run) -> Code | None:
        """A model not returned before, or None when there is none left."""
        if run.check(self.solver) != z3.sat:
            return None
        code = self.code()
        self.block(code)
        return code


class _Session:
    """A run plus one Z3 context for a whole guess call or play shard (the run keeps every context it hands
    out until it ends, so one per solver would pile up)."""

    def __init__(self, run: Run):
        self.run = run
        self._ctx: z3.Context | None = None

    @property
    def ctx(self) -> z3.Context:
        if self._ctx is None:
            self._ctx = self.run.context()
        return self._ctx


def conflicting_entries(n: int, k: int, history: History, session: _Session) -> list[int] | None:
    """Indexes of a minimal set of history entries no code fits together, or None if some code fits."""
    model = _Model(n, k, history, session.ctx, tracked=True)
    run = session.run
    if run.check(model.solver, *model.indicators) == z3.sat:
        return None
    core = {lit.get_id() for lit in model.solver.unsat_core()}
    kept = [i for i, lit in enumerate(model.indicators) if lit.get_id() in core]
    for index in list(kept):
        trial = [model.indicators[i] for i in kept if i != index]
        if run.check(model.solver, *trial) == z3.unsat:
            kept.remove(index)
    return kept


def sat_models(n: int, k: int, wanted: int) -> int:
    """How many SAT models to draw when `wanted` are asked: fewer for large codes, whose models are slow."""
    return min(wanted, max(8, SAT_WORK // (n * k)))


def count_consistent(
    n: int, k: int, history: History, session: _Session, cap: int = COUNT_CAP
) -> tuple[int, bool]:
    """How many codes fit the history, up to `cap` (fewer if the solver struggles); True if that is all."""
    if k**n <= ENUM_LIMIT:
        return len(_consistent_codes(n, k, history)), True
    model = _Model(n, k, history, session.ctx)
    model.solver.set("max_conflicts", COUNT_CONFLICTS)  # a hard count is not worth waiting for
    found = 0
    try:
        while found < cap:
            if model.next_code(session.run) is None:
                return found, True
            found += 1
    except SolverGaveUp:
        pass
    return found, False


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


# -- meet in the middle: every consistent code, counted exactly and drawn uniformly -------------------------


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
    return tables[0][high_part] + tables[1][low_part]


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


def _classes_matrix(candidates: np.ndarray, targets: np.ndarray, k: int) -> np.ndarray:
    """The feedback class (as _feedback_class) of every candidate row against every target row."""
    n = candidates.shape[1]
    black = (candidates[:, None, :] == targets[None, :, :]).sum(2)
    candidate_counts = np.stack([(candidates == c).sum(1) for c in range(k)], 1)
    target_counts = np.stack([(targets == c).sum(1) for c in range(k)], 1)
    common = np.minimum(candidate_counts[:, None, :], target_counts[None, :, :]).sum(2)
    return black * (n + 1) + common


def _fitting(candidates: np.ndarray, history: History, k: int) -> np.ndarray:
    """Which candidate rows fit every history entry."""
    guesses = np.array([g for g, _, _ in history], dtype=np.int8)
    wanted = np.array([_feedback_class(len(g), b, w) for g, b, w in history])
    return (_classes_matrix(candidates, guesses, k) == wanted).all(1)


def _split_pick(
    candidates: np.ndarray, targets: np.ndarray, history: History, objective: str, k: int
) -> tuple[int, tuple[float, bool]]:
    """The index of the candidate splitting `targets` best (ties to one that fits, then to the first)."""
    n = candidates.shape[1]
    classes = _classes_matrix(candidates, targets, k)
    width = (n + 1) * (n + 1)
    offsets = width * np.arange(len(candidates))[:, None]
    sizes = np.bincount((classes + offsets).ravel(), minlength=width * len(candidates))
    sizes = sizes.reshape(len(candidates), width).astype(np.float64)
    fits = _fitting(candidates, history, k)
    if objective == "parts":
        primary = (sizes > 0).sum(1).astype(np.float64)
    elif objective == "turns":
        # fewest turns still expected: a fitting candidate is the secret 1 time in len(targets), and then
        # its own part (of one) needs no further turn
        turns = (sizes * _turns_to_finish(sizes)).sum(1) - fits
        primary = np.round(-turns / len(targets), 9)
    else:  # entropy, as in _key
        primary = np.round(-(sizes * np.log(np.where(sizes > 1, sizes, 1))).sum(1), 9)
    best = int(np.lexsort((-np.arange(len(candidates)), fits, primary))[-1])
    return best, (float(primary[best]), bool(fits[best]))


def _turns_to_finish(sizes: np.ndarray) -> np.ndarray:
    """A rough estimate of the turns that finish a game once `sizes` codes are left (size 0: unused): 1 for
    one code, 1.5 for two (guess one), and for more a splitting guess plus ~0.6 turn per doubling."""
    return np.where(sizes <= 2, 0.5 + 0.5 * sizes, 2.0 + 0.6 * np.log2(np.maximum(sizes, 3) / 3))


def _split_climb(
    start: np.ndarray,
    targets: np.ndarray,
    history: History,
    objective: str,
    k: int,
    rng: random.Random,
    run: Run,
) -> Code:
    """Hill climbing from `start`, as _climb: recolour one position while that splits `targets` better."""
    n, best = len(start), start
    best_key = _split_pick(best[None, :], targets, history, objective, k)[1]
    for _ in range(8):
        run.raise_if_stopped()
        moves = [(i, c) for i in range(n) for c in range(k) if c != best[i]]
        if len(moves) > 120:
            moves = rng.sample(moves, 120)
        pool = np.repeat(best[None, :], len(moves), 0)
        pool[np.arange(len(moves)), [i for i, _ in moves]] = [c for _, c in moves]
        index, key = _split_pick(pool, targets, history, objective, k)
        if key <= best_key:
            break
        best, best_key = pool[index], key
    return tuple(best.tolist())


def _decide_split(n: int, k: int, history: History, rng: random.Random, samples: int, run: Run) -> Decision:
    """The largest feedback entropy over a uniform sample of the consistent codes (all of them, and the
    most parts, when they are few), counted exactly by _Split."""
    split = _Split(n, k, history, run)
    if split.count <= SPLIT_LIST_LIMIT:
        codes, objective = split.codes(), "turns"
    else:
        codes, objective = split.sample(rng, SPLIT_TARGETS), "entropy"
    decision = Decision(codes[0] if codes else None, "best", split.count, split.count)
    if split.count > 2:
        distinct = list(dict.fromkeys(codes))
        pool = np.array(rng.sample(distinct, min(samples, len(distinct))), dtype=np.int8)
        targets = np.array(codes, dtype=np.int8)
        start = pool[_split_pick(pool, targets, history, objective, k)[0]]
        decision.guess = _split_climb(start, targets, history, objective, k, rng, run)
    return decision


# -- choosing a guess --------------------------------------------------------------------------------------


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


def _key(candidate: Code, targets: _Targets, consistent: set[Code] | None, objective: str) -> tuple:
    """How well `candidate` splits `targets` (larger is better), then whether it could be the secret."""
    sizes = Counter(targets.classes(candidate)).values()
    if objective == "minimax":
        primary = -max(sizes)
    elif objective == "parts":
        primary = len(sizes)
    else:  # entropy: −Σ s·log s is N × entropy up to a constant; rounded so equal splits tie exactly
        primary = round(-sum(s * math.log(s) for s in sizes if s > 1), 9)
    return primary, consistent is None or candidate in consistent


def _pick(
    pool: Sequence[Code], targets: _Targets, consistent: set[Code] | None, objective: str, run: Run
) -> tuple[Code, tuple]:
    """The candidate splitting `targets` best (ties to a consistent one, then to pool order), and its key."""
    best, best_key = pool[0], None
    for index, candidate in enumerate(pool):
        if index % 64 == 0:
            run.raise_if_stopped()
        key = _key(candidate, targets, consistent, objective)
        if best_key is None or key > best_key:
            best, best_key = candidate, key
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


def _decide_consistent(n: int, k: int, history: History, session: _Session) -> Decision:
    code = _Model(n, k, history, session.ctx).next_code(session.run)
    if code is None:
        return Decision(None, "consistent", 0, conflict=conflicting_entries(n, k, history, session))
    return Decision(code, "consistent", None, 1)


def _decide_listed(
    n: int, k: int, history: History, objective: str, seed: int, session: _Session
) -> Decision:
    """k**n ≤ ENUM_LIMIT: candidates scored against the listed consistent codes."""
    run, strategy = session.run, "minimax" if objective == "minimax" else "best"
    codes = _consistent_codes(n, k, history)
    if not codes:
        return Decision(None, strategy, 0, conflict=conflicting_entries(n, k, history, session))
    decision = Decision(codes[0], strategy, len(codes), len(codes))
    if len(codes) <= 2:
        return decision
    rng = _rng(seed, history)
    if not history:
        decision.guess = _opening(n, k, objective, seed, run)
        return decision
    consistent = set(codes)
    pool = _canonical_codes(n, k, frozenset(c for guess, _, _ in history for c in guess)) or ()
    if objective == "minimax" or (pool and len(pool) * len(codes) <= POOL_BUDGET):
        decision.guess = _pick(pool, _Targets(codes, k), consistent, objective, run)[0]
        return decision
    # too many candidates for the budget: sampled consistent codes, refined by hill climbing
    targets = codes if len(codes) <= TARGETS_CAP else rng.sample(codes, TARGETS_CAP)
    objective = "parts" if len(targets) == len(codes) else "entropy"
    scored = _Targets(targets, k)
    start = _pick(sorted(targets[: POOL_BUDGET // len(targets)]), scored, consistent, objective, run)[0]
    decision.guess = _climb(start, scored, consistent, objective, rng, run)
    return decision


def _rejection_sample(n: int, k: int, history: History, rng: random.Random, run: Run) -> list[Code]:
    """Uniform consistent codes: draw random codes, keep the distinct ones that fit (in draw order)."""
    found: dict[Code, None] = {}
    checks = [(guess, _feedback_class(n, black, white)) for guess, black, white in history]
    colours = range(k)
    for attempt in range(REJECTION_TRIES):
        if attempt % 2048 == 0:
            run.raise_if_stopped()
            if attempt and len(found) * REJECTION_TRIES < attempt * REJECTION_ENOUGH:
                break  # on course to find too few: leave it to the SAT solver
        code = tuple(rng.choices(colours, k=n))
        if all(_feedback_class(n, *score(code, guess)) == cls for guess, cls in checks):
            found[code] = None
            if len(found) >= REJECTION_TARGETS:
                break
    return list(found)


def _sat_sample(
    n: int, k: int, history: History, count: int, rng: random.Random, session: _Session
) -> tuple[list[Code], bool]:
    """Up to `count` distinct consistent codes from the SAT solver; True if that is all of them.

    Each model is pulled towards a random code: its colours at a random quarter of the positions are
    assumed, and the assumptions in an unsat core dropped until a model fits. The models come out about as
    diverse as with random phases, less biased, and without random phases' very slow checks."""
    model, run = _Model(n, k, history, session.ctx), session.run
    found: list[Code] = []
    while len(found) < count:
        lits = (model.x[i][rng.randrange(k)] for i in rng.sample(range(n), max(1, n // 4)))
        code = _pulled_model(model, {lit.get_id(): lit for lit in lits}, run)
        if code is None:
            return found, True
        model.block(code)
        found.append(code)
    return found, False


def _pulled_model(model: _Model, assumptions: dict[int, z3.BoolRef], run: Run) -> Code | None:
    """A model under as many of `assumptions` as fit (None if there is no model at all)."""
    model.solver.set("max_conflicts", SAMPLE_CONFLICTS)
    while True:
        try:
            result = run.check(model.solver, *assumptions.values())
        except SolverGaveUp:
            if not assumptions:
                model.solver.set("max_conflicts", 2**32 - 1)
            assumptions.clear()  # a hard corner: let the solver go where it likes
            continue
        if result == z3.sat:
            return model.code()
        core = model.solver.unsat_core()
        if len(core) == 0:
            return None
        for lit in core:
            assumptions.pop(lit.get_id(), None)


def _decide_sampled(n: int, k: int, history: History, seed: int, samples: int, session: _Session) -> Decision:
    """k**n > ENUM_LIMIT: the largest feedback entropy over sampled consistent codes."""
    run, rng = session.run, _rng(seed, history)
    if not history:
        return Decision(_opening(n, k, "entropy", seed, run), "best", k**n, k**n)
    if split_fits(n, k):
        try:
            decision = _decide_split(n, k, history, rng, samples, run)
        except _TooManyPairs:
            pass
        else:
            if decision.guess is None:
                decision.conflict = conflicting_entries(n, k, history, session)
            return decision
    codes = _rejection_sample(n, k, history, rng, run)
    uniform, exact = len(codes) >= min(samples, REJECTION_ENOUGH), False
    if not uniform:
        codes, exact = _sat_sample(n, k, history, sat_models(n, k, samples), rng, session)
        if not codes:
            return Decision(None, "best", 0, conflict=conflicting_entries(n, k, history, session))
    decision = Decision(codes[0], "best", len(codes) if exact else None, len(codes))
    if len(codes) > 2:
        objective = "parts" if exact else "entropy"
        targets, consistent = _Targets(codes, k), set(codes)
        guess = _pick(codes[:samples], targets, consistent, objective, run)[0]
        if uniform or exact:
            # a biased SAT sample would only teach the climb that sample's quirks
            guess = _climb(guess, targets, consistent, objective, rng, run)
        decision.guess = guess
    return decision


def decide(
    n: int,
    k: int,
    history: History,
    strategy: str = "best",
    seed: int = 0,
    samples: int = DEFAULT_SAMPLES,
    session: _Session | None = None,
) -> Decision:
    """The next guess after `history` (which must not contain the secret yet) with `strategy`."""
    session = session or _Session(Run())
    if strategy == "consistent":
        return _decide_consistent(n, k, history, session)
    if strategy == "minimax":
        if k**n <= MINIMAX_LIMIT:
            return _decide_listed(n, k, history, "minimax", seed, session)
        decision = decide(n, k, history, "best", seed, samples, session)
        decision.note = f"minimax scores every code, so it needs k**n ≤ {MINIMAX_LIMIT}: best played instead"
        return decision
    if k**n <= ENUM_LIMIT:
        return _decide_listed(n, k, history, "parts", seed, session)
    return _decide_sampled(n, k, history, seed, samples, session)


# -- kind mastermind.guess ---------------------------------------------------------------------------------


def history_of(params: dict[str, Any]) -> History:
    return tuple((tuple(e["guess"]), e["black"], e["white"]) for e in params.get("history") or [])


def _describe(history: History, entries: list[int]) -> str:
    return "; ".join(
        f"#{i} {list(history[i][0])} → {history[i][1]} black {history[i][2]} white" for i in entries
    )


def _contradiction(history: History, entries: list[int], strategy: str, started: float) -> dict[str, Any]:
    which = "guess" if len(entries) == 1 else "guesses"
    message = f"no code fits the feedback of history {which} {_describe(history, entries)}"
    return {
        "status": "contradiction",
        "guess": None,
        "consistent": False,
        "remaining": 0,
        "remaining_at_least": 0,
        "strategy": strategy,
        "note": None,
        "seconds": time.perf_counter() - started,
        "error": {"code": 422, "message": message, "entries": entries},
    }


def guess(params: dict[str, Any], run: Run) -> dict[str, Any]:
    """Kind `mastermind.guess`: the next guess for a history (see the module docstring for the result)."""
    with run.interruptible():
        return _guess(params, run)


def _guess(params: dict[str, Any], run: Run) -> dict[str, Any]:
    started = time.perf_counter()
    n, k = params["n"], params["k"]
    history = history_of(params)
    strategy = params.get("strategy") or "best"
    session = _Session(run)
    solved = next((i for i, (_, black, _) in enumerate(history) if black == n), None)
    if solved is not None:
        secret = history[solved][0]
        wrong = [i for i, (g, b, w) in enumerate(history) if score(secret, g) != (b, w)]
        if wrong:
            return _contradiction(history, sorted({solved, *wrong}), strategy, started)
        return {
            "status": "solved",
            "guess": list(secret),
            "consistent": True,
            "remaining": 1,
            "remaining_at_least": 1,
            "strategy": strategy,
            "note": None,
            "seconds": time.perf_counter() - started,
        }
    decision = decide(
        n, k, history, strategy, params.get("seed") or 0, params.get("samples") or DEFAULT_SAMPLES, session
    )
    if decision.guess is None:
        return _contradiction(
            history, decision.conflict or list(range(len(history))), decision.strategy, started
        )
    remaining, at_least = decision.remaining, decision.remaining_at_least
    cap = sat_models(n, k, COUNT_CAP)
    if remaining is None and at_least < cap:
        counted, exact = count_consistent(n, k, history, session, cap)
        remaining, at_least = (counted if exact else None), max(at_least, counted)
    return {
        "status": "ok",
        "guess": list(decision.guess),
        "consistent": _fits(decision.guess, history),
        "remaining": remaining,
        "remaining_at_least": at_least,
        "strategy": decision.strategy,
        "note": decision.note,
        "seconds": time.perf_counter() - started,
    }


# -- kind mastermind.play ----------------------------------------------------------------------------------


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


class _Player:
    """Plays games with one strategy, remembering the guess for every history it has seen (the first guess
    is the same in every game, the second depends only on the first feedback, and so on)."""

    def __init__(self, params: dict[str, Any], run: Run):
        self.n, self.k = params["n"], params["k"]
        self.strategy = params.get("strategy") or "best"
        self.seed = params.get("seed") or 0
        self.samples = params.get("samples") or DEFAULT_SAMPLES
        self.max_turns = params.get("max_turns") or default_max_turns(self.n, self.k)
        self.session = _Session(run)
        self.memo: dict[History, Code] = {}

    def next_guess(self, history: History) -> Code:
        if history not in self.memo:
            decision = decide(self.n, self.k, history, self.strategy, self.seed, self.samples, self.session)
            if decision.guess is None:  # cannot happen with true feedback
                raise RuntimeError(f"no code fits the feedback so far: {history}")
            self.memo[history] = decision.guess
        return self.memo[history]

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
    return low_s * per_position ** (n - low) * max(1.0, k / 6)


def plan(params: dict[str, Any], run: Run) -> list[str]:
    """Shard keys "start:stop": index ranges over `secrets_of(params)`, each a few seconds of play."""
    total = len(secrets_of(params))
    estimate = _seconds_per_game(params["n"], params["k"], params.get("strategy") or "best")
    size = max(1, min(500, int(SHARD_SECONDS / estimate)))
    return [f"{start}:{min(start + size, total)}" for start in range(0, total, size)]


def run_shard(params: dict[str, Any], key: str, run: Run) -> ShardResult:
    start, stop = (int(part) for part in key.split(":"))
    player = _Player(params, run)
    games = []
    with run.interruptible():
        for index, secret in enumerate(secrets_of(params)[start:stop], start):
            games.append(player.play(index, secret))
            run.progress(games_done=len(games), games_total=stop - start)
    return ShardResult(summary={"games": games})


def combine(params: dict[str, Any], summaries: list[dict[str, Any]]) -> dict[str, Any]:
    games = sorted((game for summary in summaries for game in summary["games"]), key=lambda g: g["index"])
    count = len(games)
    seconds = sum(game["seconds"] for game in games)
    histogram = Counter(game["turns"] for game in games if game["solved"])
    strategy = params.get("strategy") or "best"
    note = None
    if strategy == "minimax" and params["k"] ** params["n"] > MINIMAX_LIMIT:
        note = f"minimax scores every code, so it needs k**n ≤ {MINIMAX_LIMIT}: best played instead"
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

"""A set of boards as a numpy matrix (one row per board, one column per sector), for fast filtering.

Deduction and simulation start from every board of a mode. When the host offers the stored enumeration
(`run.resource("planetx.boards", mode=...)` returns a key naming it and a loader of its codes), that is
used; otherwise the boards are enumerated on demand with the combinatorial enumerator (seconds at expert:
docs/benchmarks.md). Either way they are kept for the life of the process.

A set may weigh its boards (`weighted`): each board's likelihood given the clues heard, scaled to average
1, so weighted counts read as expected boards. Unweighted, every board counts 1. A player unsure how the
game deals its clues weighs by several models at once (`weighted_by_model`): the set keeps each model's
likelihood per board, and each board weighs their mean (equal odds on the models before any clue).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import cast

import numpy as np

from puzzles.planetx.board import BITS, BOARDS_RESOURCE, PLANET_X, Mode
from puzzles.planetx.rules import enumerate_boards
from puzzles.runtime import Run

RESOURCE = BOARDS_RESOURCE
_cache: dict[str, tuple[str, BoardSet]] = {}  # mode → (source, boards)


@dataclass(frozen=True, eq=False)
class BoardSet:
    mode: Mode
    codes: np.ndarray  # int64, one per board
    grid: np.ndarray  # uint8, boards × sectors, object codes as in board.LETTERS
    source: str = "enumerated"
    #: each board's row in the set this one was cut from (`whole`), so what is known per board of the whole
    #: set (research clues' truth) applies to any subset
    rows: np.ndarray = field(repr=False, kw_only=True)
    origin: BoardSet | None = field(default=None, repr=False)
    #: each board's relative likelihood given what was seen (None: all equally likely)
    likelihood: np.ndarray | None = field(default=None, repr=False)
    #: boards × models: each model's likelihood of what was seen (None: one model, or none weighed yet)
    per_model: np.ndarray | None = field(default=None, repr=False, kw_only=True)

    @property
    def weights(self) -> np.ndarray:
        """Each board's weight: its likelihood, or 1 when all are equally likely."""
        return np.ones(len(self.codes)) if self.likelihood is None else self.likelihood

    def weighted(self, factor: np.ndarray) -> BoardSet:
        """The boards where `factor` (a likelihood per board) is not 0, each board's weight multiplied by
        it; weights are scaled to average 1, so weighted counts stay "expected boards"."""
        if self.per_model is not None:
            return self.weighted_by_model(np.repeat(factor[:, None], self.per_model.shape[1], axis=1))
        keep = factor > 0
        likelihood = (self.weights * factor)[keep]
        if len(likelihood):
            likelihood *= len(likelihood) / likelihood.sum()
        return replace(self.subset(keep), likelihood=likelihood)

    def weighted_by_model(self, factors: np.ndarray) -> BoardSet:
        """The boards some model still allows, given `factors` (boards × models: each model's likelihood
        of what was just seen), each weighing the mean of the models' likelihoods so far."""
        before = self.per_model if self.per_model is not None else self.weights[:, None]
        per_model = before * factors
        mixture = per_model.mean(axis=1)
        keep = mixture > 0
        per_model, mixture = per_model[keep], mixture[keep]
        scale = len(mixture) / mixture.sum() if len(mixture) else 1.0
        return replace(self.subset(keep), likelihood=mixture * scale, per_model=per_model * scale)

    def model_odds(self) -> np.ndarray | None:
        """How likely each model is given what was seen (None: one model)."""
        if self.per_model is None:
            return None
        mass = self.per_model.sum(axis=0)
        return cast(np.ndarray, mass / mass.sum() if mass.sum() else mass)

    @property
    def whole(self) -> BoardSet:
        return self.origin or self

    @classmethod
    def from_codes(
        cls, mode: Mode, codes: Sequence[int] | np.ndarray, source: str = "enumerated"
    ) -> BoardSet:
        codes = np.sort(np.asarray(codes, dtype=np.int64))
        shifts = np.arange(mode.sectors, dtype=np.int64) * BITS
        grid = ((codes[:, None] >> shifts) & 7).astype(np.uint8)
        return cls(mode, codes, grid, source, rows=np.arange(len(codes)))

    def __len__(self) -> int:
        return len(self.codes)

    def subset(self, keep: np.ndarray) -> BoardSet:
        """The boards where `keep` (a boolean mask or an index array) selects them."""
        likelihood = None if self.likelihood is None else self.likelihood[keep]
        return BoardSet(
            self.mode,
            self.codes[keep],
            self.grid[keep],
            self.source,
            self.whole,
            likelihood,
            rows=self.rows[keep],
            per_model=None if self.per_model is None else self.per_model[keep],
        )

    def planet_x_triples(self) -> np.ndarray:
        """Per board: Planet X's sector and its two neighbours' objects as one number (what a player
        must name to locate it): `index * 36 + left * 6 + right` with a 0-based sector index. Found once
        for the whole set; a subset reads its rows of that."""
        if self.origin is not None:
            return cast(np.ndarray, self.origin._triples[self.rows])
        return self._triples

    @cached_property
    def _triples(self) -> np.ndarray:
        n = self.mode.sectors
        rows = np.arange(len(self.grid))
        where = np.argmax(self.grid == PLANET_X, axis=1)
        left = self.grid[rows, (where - 1) % n].astype(np.int64)
        right = self.grid[rows, (where + 1) % n].astype(np.int64)
        triples = where.astype(np.int64) * 36 + left * 6 + right
        triples.flags.writeable = False
        return cast(np.ndarray, triples)

    def triple_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Every Planet X triple left and how many boards hold it (weighted), most likely first (ties: lower
        triple)."""
        triples, counts = weighted_unique(self.planet_x_triples(), self.likelihood)
        order = np.lexsort((triples, -counts))
        return triples[order], counts[order]


def weighted_unique(keys: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys (ascending) and the total weight of the boards holding each (None: each board
    weighs 1). Keys of a small range are counted in one pass (`np.bincount`) rather than sorted: the same
    sums in the same order, so the same floats."""
    if _dense(keys):
        size = int(keys.max()) + 1
        distinct = np.flatnonzero(np.bincount(keys, minlength=size))
        totals = np.bincount(keys, weights=weights, minlength=size)
        return distinct, totals[distinct]
    if weights is None:
        return np.unique(keys, return_counts=True)
    distinct, inverse = np.unique(keys, return_inverse=True)
    return distinct, np.bincount(inverse, weights=weights, minlength=len(distinct))


def unique_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(keys, return_inverse=True)`, in one pass for keys of a small range."""
    if not _dense(keys):
        distinct, inverse = np.unique(keys, return_inverse=True)
        return distinct, inverse
    size = int(keys.max()) + 1
    distinct = np.flatnonzero(np.bincount(keys, minlength=size))
    index = np.zeros(size, dtype=np.int64)
    index[distinct] = np.arange(len(distinct))
    return distinct, index[keys]


def _dense(keys: np.ndarray) -> bool:
    """Are the keys non-negative integers of a range small enough to count in an array?"""
    if not len(keys) or keys.dtype.kind not in "iu" or int(keys.min()) < 0:
        return False
    return int(keys.max()) < _DENSE_SLOTS_PER_KEY * len(keys) + _DENSE_SLOTS_MIN


_DENSE_SLOTS_PER_KEY, _DENSE_SLOTS_MIN = 4, 1 << 16


def triple_parts(triple: int) -> tuple[int, int, int]:
    """(1-based sector, left object, right object) of a `planet_x_triples` number."""
    return triple // 36 + 1, triple // 6 % 6, triple % 6


def all_boards(mode: Mode, run: Run) -> BoardSet:
    """Every board of the mode: the stored enumeration when the host has one, else enumerated here.
    One set per mode is kept for the life of the process."""
    offered = run.resource(RESOURCE, mode=mode.name)
    source = f"stored:{offered[0]}" if offered is not None else "enumerated"
    cached = _cache.get(mode.name)
    if cached is None or cached[0] != source:
        if offered is not None:
            run.progress(phase="loading boards", mode=mode.name)
            boards = BoardSet.from_codes(mode, offered[1](), source="stored")
        else:
            run.progress(phase="enumerating", mode=mode.name)
            boards = BoardSet.from_codes(mode, enumerate_boards(mode), source="enumerated")
        cached = _cache[mode.name] = (source, boards)
    return cached[1]
